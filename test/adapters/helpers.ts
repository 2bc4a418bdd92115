// Shared pieces of the adapter tests: records, calls and process checks.
import { readFileSync } from 'node:fs';
import type { AdapterCall } from '../../src/adapters/adapter.js';
import type { CapabilitySpec, JsonObject, PluginConfig, PluginDescriptor, PluginType } from '../../src/protocol/types.js';
import type { PluginRecord } from '../../src/registry/record.js';

export function capability(id: string, extra: Partial<CapabilitySpec> = {}): CapabilitySpec {
  return { id, name: id, description: `capability ${id}`, parameters: [], post_process: false, ...extra };
}

export function descriptor(id: string, type: PluginType, config: PluginConfig, extra: Partial<PluginDescriptor> = {}): PluginDescriptor {
  return {
    id,
    name: id,
    description: `plugin ${id}`,
    capabilities: [capability('run')],
    source: 'external',
    type,
    config,
    ...extra,
  };
}

export function record(d: PluginDescriptor): PluginRecord {
  return { descriptor: d, owner: 'api', state: 'online', content_hash: 'x', registered_at: 0, updated_at: 0 };
}

let counter = 0;
export function call(rec: PluginRecord, parameters: JsonObject = {}, options: { capability?: CapabilitySpec; signal?: AbortSignal } = {}): AdapterCall {
  const cap = options.capability ?? rec.descriptor.capabilities[0]!;
  counter++;
  return {
    record: rec,
    capability: cap,
    request: {
      request_id: `req-${counter}`,
      plugin_id: rec.descriptor.id,
      capability_id: cap.id,
      parameters,
      deadline: Date.now() + 30_000,
      user_id: 'alice',
    },
    signal: options.signal ?? new AbortController().signal,
  };
}

/** A process counts as alive while /proc lists it and it is not a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs = 5000, stepMs = 20): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

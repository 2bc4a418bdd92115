// The buy plugin's capability as the Core sees it, read from the real plugins/buy/plugin.yaml so the
// resolver tests also check the shipped manifest.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import type { CapabilitySpec, ParameterSpec, PluginConfig } from '../../src/protocol/types.js';
import type { PluginRecord } from '../../src/registry/record.js';
import type { SystemContext } from '../../src/conversation/resolver-api.js';

const manifestPath = fileURLToPath(new URL('../../plugins/buy/plugin.yaml', import.meta.url));

interface RawCapability extends Omit<CapabilitySpec, 'parameters' | 'post_process'> {
  post_process?: boolean;
  parameters: (Omit<ParameterSpec, 'required'> & { required?: boolean })[];
}

export function buyCapability(): CapabilitySpec {
  const manifest = parse(readFileSync(manifestPath, 'utf8')) as { capabilities: RawCapability[] };
  const raw = manifest.capabilities[0]!;
  return {
    ...raw,
    post_process: raw.post_process ?? false,
    parameters: raw.parameters.map((p) => ({ ...p, required: p.required ?? true })),
  };
}

export function recordWith(config: PluginConfig, capabilities: CapabilitySpec[] = [buyCapability()]): PluginRecord {
  return {
    descriptor: {
      id: 'buy',
      name: 'Buy Plugin',
      description: 'Place orders for delivery.',
      capabilities,
      source: 'built-in',
      type: 'inline',
      config,
    },
    owner: 'builtin',
    state: 'online',
    content_hash: 'test',
    registered_at: 0,
    updated_at: 0,
  };
}

export const system: SystemContext = {
  datetime: '2025-06-01T10:00:00+02:00',
  date: '2025-06-01',
  time: '10:00',
  timezone: 'Europe/Paris',
  location: 'Paris',
  user_id: 'alice',
  channel: 'cli',
};

// What the rest of the Core may ask of the registry. The Registry class implements it; tests and
// adapters in other rooms can depend on this interface alone.
import type { PluginDescriptor, ValidationIssue } from '../protocol/types.js';
import type { TypedEventBus } from './events.js';
import type { PluginRecord, PluginState } from './record.js';

export interface RegisterInput {
  descriptor: PluginDescriptor;
  /** 'builtin' | 'api' | 'mqtt:...' — see PluginRecord.owner. */
  owner: string;
  epoch?: number;
  heartbeat_interval_sec?: number;
  /** Initial state; defaults to 'online'. */
  state?: PluginState;
  state_reason?: string;
}

export type RegisterOutcome =
  | { ok: true; record: PluginRecord; change: 'created' | 'updated' | 'unchanged' }
  /** invalid: a bad id; limit: over limits.max_capabilities / max_examples; conflict: the id belongs to another owner. */
  | { ok: false; code: 'invalid' | 'limit' | 'conflict'; errors: ValidationIssue[] };

export type UnregisterOutcome = { ok: true; record: PluginRecord } | { ok: false; error: string; code: 'not_found' | 'forbidden' };

export interface RegistryApi {
  readonly events: TypedEventBus;
  register(input: RegisterInput): RegisterOutcome;
  /** owner undefined = an administrator (HTTP API, CLI), allowed to remove any non-built-in plugin. */
  unregister(pluginId: string, owner?: string): UnregisterOutcome;
  get(pluginId: string): PluginRecord | undefined;
  list(): PluginRecord[];
  /** Changes liveness state; emits plugin.health when it actually changes. */
  setState(pluginId: string, state: PluginState, reason?: string): void;
}

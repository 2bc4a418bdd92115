// The registry: canonical descriptors by id, who owns each id, and its liveness state.
import type { Database } from 'better-sqlite3';
import type { Logger } from '../log.js';
import { descriptorContentHash } from '../protocol/descriptor/content-hash.js';
import { explainBadId, isPluginId } from '../protocol/ids.js';
import { guardDiskFull } from '../kit/disk-full.js';
import type { TypedEventBus } from './events.js';
import { checkRegistrationLimits, DEFAULT_REGISTRATION_LIMITS, type RegistrationLimits } from './limits.js';
import type { PluginRecord, PluginState } from './record.js';
import type { RegisterInput, RegisterOutcome, RegistryApi, UnregisterOutcome } from './registry-api.js';
import { RegistryStore } from './store.js';

export const BUILTIN_OWNER = 'builtin';

export interface RegistryDeps {
  db: Database;
  events: TypedEventBus;
  log: Logger;
  now?: () => number;
  /** Per-plugin limits on capabilities and examples; defaults: DEFAULT_REGISTRATION_LIMITS. */
  limits?: RegistrationLimits;
}

export class Registry implements RegistryApi {
  readonly events: TypedEventBus;
  private readonly records = new Map<string, PluginRecord>();
  private readonly store: RegistryStore;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly limits: RegistrationLimits;

  constructor(deps: RegistryDeps) {
    this.events = deps.events;
    this.log = deps.log;
    this.now = deps.now ?? Date.now;
    this.limits = deps.limits ?? DEFAULT_REGISTRATION_LIMITS;
    this.store = new RegistryStore(deps.db);
    for (const record of this.store.loadAll()) {
      // A plugin reached over a connection must prove it is alive again after a restart; until then it
      // is kept (and indexed) but not routed to.
      if (record.descriptor.type === 'mqtt' && record.state === 'online') {
        record.state = 'offline';
        record.state_reason = 'waiting for the plugin to re-register after a Core restart';
      }
      this.records.set(record.descriptor.id, record);
    }
  }

  register(input: RegisterInput): RegisterOutcome {
    const { descriptor, owner } = input;
    if (!isPluginId(descriptor.id)) return { ok: false, code: 'invalid', errors: [{ path: '/id', message: explainBadId(descriptor.id) }] };
    // Checked on every path (MQTT, HTTP, manifests, MCP tool lists) before anything is stored or indexed.
    const overLimits = checkRegistrationLimits(descriptor, this.limits);
    if (overLimits.length > 0) {
      this.log.warn({ plugin_id: descriptor.id, owner, errors: overLimits }, 'registration refused: over the limits');
      return { ok: false, code: 'limit', errors: overLimits };
    }
    const existing = this.records.get(descriptor.id);
    if (existing && existing.owner !== owner) {
      const message =
        existing.owner === BUILTIN_OWNER
          ? `plugin id "${descriptor.id}" belongs to a built-in plugin and cannot be taken`
          : `plugin id "${descriptor.id}" is already registered by another client; unregister it first`;
      this.log.warn({ plugin_id: descriptor.id, owner, existing_owner: existing.owner }, 'registration refused: id owned by another');
      return { ok: false, code: 'conflict', errors: [{ path: '/id', message }] };
    }
    const now = this.now();
    const content_hash = descriptorContentHash(descriptor);
    const record: PluginRecord = {
      descriptor,
      owner,
      state: input.state ?? 'online',
      ...(input.state_reason !== undefined ? { state_reason: input.state_reason } : {}),
      ...(input.epoch !== undefined ? { epoch: input.epoch } : {}),
      ...(input.heartbeat_interval_sec !== undefined ? { heartbeat_interval_sec: input.heartbeat_interval_sec } : {}),
      content_hash,
      registered_at: existing?.registered_at ?? now,
      updated_at: now,
    };
    guardDiskFull(`registering plugin ${descriptor.id}`, () => this.store.save(record));
    this.records.set(descriptor.id, record);
    if (!existing) {
      this.log.info({ plugin_id: descriptor.id, type: descriptor.type, owner }, 'plugin registered');
      this.events.emit('plugin.registered', { record });
      return { ok: true, record, change: 'created' };
    }
    const change = existing.content_hash === content_hash ? 'unchanged' : 'updated';
    if (change === 'updated') {
      this.log.info({ plugin_id: descriptor.id }, 'plugin updated');
      this.events.emit('plugin.updated', { record, previous: existing });
    }
    if (existing.state !== record.state) this.events.emit('plugin.health', { record, previous_state: existing.state });
    return { ok: true, record, change };
  }

  unregister(pluginId: string, owner?: string): UnregisterOutcome {
    const existing = this.records.get(pluginId);
    if (!existing) return { ok: false, code: 'not_found', error: `no plugin with id "${pluginId}" is registered` };
    if (owner !== undefined && existing.owner !== owner) {
      return { ok: false, code: 'forbidden', error: `plugin "${pluginId}" is owned by another client` };
    }
    if (owner === undefined && existing.owner === BUILTIN_OWNER) {
      return {
        ok: false,
        code: 'forbidden',
        error: `plugin "${pluginId}" is built in; remove its folder from the plugins directory instead`,
      };
    }
    this.records.delete(pluginId);
    this.store.delete(pluginId);
    this.log.info({ plugin_id: pluginId }, 'plugin removed');
    this.events.emit('plugin.removed', { record: existing });
    return { ok: true, record: existing };
  }

  /**
   * Gives an id to another owner (an admin's transfer, or a credential claiming an id an anonymous client
   * held). Built-in ids never move. Returns the updated record, or an error for the caller to show.
   */
  transfer(pluginId: string, owner: string): { ok: true; record: PluginRecord; previous_owner: string } | { ok: false; error: string } {
    const existing = this.records.get(pluginId);
    if (!existing) return { ok: false, error: `no plugin "${pluginId}" is registered` };
    if (existing.owner === BUILTIN_OWNER) return { ok: false, error: `plugin "${pluginId}" is built in; its id cannot change owner` };
    const record: PluginRecord = { ...existing, owner, updated_at: this.now() };
    this.store.save(record);
    this.records.set(pluginId, record);
    this.log.warn({ plugin_id: pluginId, owner, previous_owner: existing.owner }, 'plugin id given to a new owner');
    return { ok: true, record, previous_owner: existing.owner };
  }

  /** Removal by the built-in loader, which owns its ids. */
  removeBuiltin(pluginId: string): UnregisterOutcome {
    return this.unregister(pluginId, BUILTIN_OWNER);
  }

  get(pluginId: string): PluginRecord | undefined {
    return this.records.get(pluginId);
  }

  list(): PluginRecord[] {
    return [...this.records.values()].sort((a, b) => a.descriptor.id.localeCompare(b.descriptor.id));
  }

  setState(pluginId: string, state: PluginState, reason?: string): void {
    const existing = this.records.get(pluginId);
    if (!existing) return;
    if (existing.state === state && existing.state_reason === reason) return;
    const previous_state = existing.state;
    const record: PluginRecord = { ...existing, state, updated_at: this.now() };
    if (reason === undefined) delete record.state_reason;
    else record.state_reason = reason;
    this.records.set(pluginId, record);
    this.store.saveState(pluginId, state, reason, record.updated_at);
    if (previous_state !== state) {
      this.log.info({ plugin_id: pluginId, state, previous_state, reason }, 'plugin state changed');
      this.events.emit('plugin.health', { record, previous_state });
    }
  }
}

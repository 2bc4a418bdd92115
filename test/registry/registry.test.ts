import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import type { PluginDescriptor } from '../../src/protocol/types.js';
import { TypedEventBus, type RegistryEventName } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';

function descriptor(id: string, description = `plugin ${id}`): PluginDescriptor {
  return {
    id,
    name: id,
    description,
    capabilities: [{ id: 'run', name: 'Run', description: 'runs', parameters: [], post_process: false }],
    source: 'external',
    type: 'mqtt',
    config: {},
  };
}

function setup(db = new Database(':memory:')) {
  const log = silentLogger();
  const events = new TypedEventBus(log);
  const seen: string[] = [];
  for (const name of ['plugin.registered', 'plugin.updated', 'plugin.removed', 'plugin.health'] as RegistryEventName[]) {
    events.on(name, (payload) => {
      seen.push(`${name}:${payload.record.descriptor.id}`);
    });
  }
  return { db, events, seen, registry: new Registry({ db, events, log }) };
}

describe('Registry', () => {
  it('registers, updates from the same owner, reports unchanged descriptors and removes', () => {
    const { registry, seen } = setup();
    expect(registry.register({ descriptor: descriptor('a'), owner: 'mqtt:client:x' })).toMatchObject({ ok: true, change: 'created' });
    expect(registry.register({ descriptor: descriptor('a'), owner: 'mqtt:client:x' })).toMatchObject({ ok: true, change: 'unchanged' });
    expect(registry.register({ descriptor: descriptor('a', 'new text'), owner: 'mqtt:client:x' })).toMatchObject({ ok: true, change: 'updated' });
    expect(registry.get('a')?.descriptor.description).toBe('new text');
    expect(registry.unregister('a', 'mqtt:client:x')).toMatchObject({ ok: true });
    expect(registry.get('a')).toBeUndefined();
    expect(seen).toEqual(['plugin.registered:a', 'plugin.updated:a', 'plugin.removed:a']);
  });

  it('refuses an id owned by a built-in or by another client, with a clear error', () => {
    const { registry } = setup();
    registry.register({ descriptor: descriptor('time'), owner: 'builtin' });
    registry.register({ descriptor: descriptor('lamp'), owner: 'mqtt:client:lamp' });
    const builtin = registry.register({ descriptor: descriptor('time'), owner: 'api' });
    expect(builtin).toMatchObject({ ok: false });
    expect(JSON.stringify(builtin)).toMatch(/built-in/);
    const other = registry.register({ descriptor: descriptor('lamp'), owner: 'mqtt:client:evil' });
    expect(JSON.stringify(other)).toMatch(/another client/);
    expect(registry.unregister('lamp', 'mqtt:client:evil')).toMatchObject({ ok: false, code: 'forbidden' });
    expect(registry.unregister('time')).toMatchObject({ ok: false, code: 'forbidden' });
    expect(registry.unregister('nope')).toMatchObject({ ok: false, code: 'not_found' });
    expect(registry.list().map((r) => r.descriptor.id)).toEqual(['lamp', 'time']);
  });

  it('rejects invalid ids', () => {
    const { registry } = setup();
    for (const id of ['a/b', '+', '#', '', 'x'.repeat(200), 'UPPER']) {
      expect(registry.register({ descriptor: descriptor(id), owner: 'api' }).ok).toBe(false);
    }
    expect(registry.list()).toHaveLength(0);
  });

  it('emits plugin.health only on real state changes, and a throwing listener breaks nothing', () => {
    const { registry, seen, events } = setup();
    events.on('plugin.health', () => {
      throw new Error('listener bug');
    });
    registry.register({ descriptor: descriptor('a'), owner: 'api' });
    registry.setState('a', 'stale', 'missed heartbeats');
    registry.setState('a', 'stale', 'missed heartbeats');
    registry.setState('a', 'online');
    expect(seen.filter((s) => s.startsWith('plugin.health'))).toHaveLength(2);
    expect(registry.get('a')?.state).toBe('online');
  });

  it('keeps everything across a restart; MQTT plugins wait offline for re-registration', () => {
    const dir = new Database(':memory:');
    const first = setup(dir);
    first.registry.register({ descriptor: descriptor('m'), owner: 'mqtt:client:m', epoch: 5 });
    first.registry.register({ descriptor: { ...descriptor('h'), type: 'http' }, owner: 'api' });
    const second = setup(dir);
    expect(second.registry.get('m')).toMatchObject({ state: 'offline', epoch: 5, owner: 'mqtt:client:m' });
    expect(second.registry.get('h')).toMatchObject({ state: 'online', owner: 'api' });
    expect(second.registry.get('m')?.content_hash).toBe(first.registry.get('m')?.content_hash);
  });
});

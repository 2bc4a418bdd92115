import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBuiltinLoader, type BuiltinLoader } from '../../src/adapters/builtin-loader.js';
import type { BuiltinContext } from '../../src/adapters/builtin-module.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { silentLogger } from '../../src/log.js';
import type { PluginConfig } from '../../src/protocol/types.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';
import { now, zonedTime } from '../../plugins/time/index.js';

function ctx(config: PluginConfig = {}): BuiltinContext {
  return {
    data_dir: tmpdir(),
    log: silentLogger(),
    config,
    signal: new AbortController().signal,
    notify: async () => ({ ok: false, error: 'no notifications in this test' }),
    request: { request_id: 'r1', plugin_id: 'time', capability_id: 'now', parameters: {}, deadline: Date.now() + 1000 },
  };
}

describe('time plugin', () => {
  it('formats a known instant in a zone with its offset (DST aware)', () => {
    const instant = new Date('2025-06-03T12:05:09Z');
    expect(zonedTime(instant, 'Europe/Berlin')).toEqual({
      iso: '2025-06-03T14:05:09+02:00',
      date: '2025-06-03',
      time: '14:05:09',
      weekday: 'Tuesday',
      timezone: 'Europe/Berlin',
      utc_offset: 'UTC+02:00',
    });
    expect(zonedTime(new Date('2025-01-03T12:05:09Z'), 'Europe/Berlin').utc_offset).toBe('UTC+01:00');
    expect(zonedTime(instant, 'UTC').iso).toBe('2025-06-03T12:05:09+00:00');
    expect(zonedTime(instant, 'Asia/Kolkata').time).toBe('17:35:09');
  });

  it('answers now() for a zone, close to the real clock', async () => {
    const result = (await now({ timezone: 'Asia/Tokyo' }, ctx())) as { text: string; data: { iso: string; timezone: string } };
    expect(result.data.timezone).toBe('Asia/Tokyo');
    expect(Math.abs(new Date(result.data.iso).getTime() - Date.now())).toBeLessThan(5000);
    expect(result.text).toMatch(/^It is \w+day, \d{1,2} \w+ \d{4}, \d\d:\d\d in Asia\/Tokyo \(UTC\+09:00\)\.$/);
  });

  it('falls back to the configured default zone, then the system zone', async () => {
    const configured = (await now({}, ctx({ default_parameters: { timezone: 'America/New_York' } }))) as { data: { timezone: string } };
    expect(configured.data.timezone).toBe('America/New_York');
    const system = (await now({}, ctx())) as { data: { timezone: string } };
    expect(system.data.timezone).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
  });

  it('gives a clear error for an unknown zone', async () => {
    const result = await now({ timezone: 'Mars/Olympus_Mons' }, ctx());
    expect(result).toEqual({
      success: false,
      error: 'unknown time zone "Mars/Olympus_Mons": use an IANA name such as Europe/Berlin, America/New_York, Asia/Tokyo or UTC',
    });
  });
});

describe('time plugin through the loader and the dispatcher', () => {
  let root: string;
  let loader: BuiltinLoader;
  let dispatcher: Dispatcher;
  let registry: Registry;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'hc-time-'));
    registry = new Registry({ db: new Database(':memory:'), events: new TypedEventBus(silentLogger()), log: silentLogger() });
    // The real plugins folder; compiled_dir points nowhere so the TypeScript source is what loads.
    loader = createBuiltinLoader({
      dir: resolve('plugins'),
      data_dir: root,
      registry,
      log: silentLogger(),
      hot_reload: false,
      compiled_dir: join(root, 'none'),
    });
    await loader.start();
    dispatcher = new Dispatcher({
      registry,
      adapters: [loader.adapter],
      config: { default_timeout_sec: 5, default_max_concurrency: 2, default_queue_limit: 10 },
      log: silentLogger(),
    });
  });
  afterAll(async () => {
    await dispatcher.stop();
    await loader.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('is registered from plugins/time with a routable descriptor', () => {
    const record = registry.get('time')!;
    expect(record).toMatchObject({ state: 'online', owner: 'builtin' });
    expect(record.descriptor.examples!.length).toBeGreaterThanOrEqual(5);
    expect(record.descriptor.capabilities[0]!.parameters[0]).toMatchObject({ name: 'timezone', system_key: 'timezone', required: false });
  });

  it('every shipped built-in of this room (time, notes, weather) loads without error', () => {
    for (const id of ['time', 'notes', 'weather']) {
      expect(
        loader.status().find((s) => s.plugin_id === id),
        id,
      ).toMatchObject({ state: 'loaded' });
      expect(registry.get(id)!.state).toBe('online');
    }
  });

  it('answers through the dispatcher and refuses a non-string timezone', async () => {
    expect(await dispatcher.invoke({ plugin_id: 'time', parameters: { timezone: 'UTC' } })).toMatchObject({ success: true, data: { timezone: 'UTC' } });
    expect(await dispatcher.invoke({ plugin_id: 'time', parameters: { timezone: 'Nowhere/City' } })).toMatchObject({
      success: false,
      error_code: 'plugin_error',
    });
    expect((await dispatcher.invoke({ plugin_id: 'time', parameters: { timezone: 5 } })).error_code).toBe('invalid_params');
  });
});

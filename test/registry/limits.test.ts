// Registration limits on every path: an MQTT registration gets a refusal ack naming the limit, the HTTP
// API answers 400 naming it, a manifest over the limit is reported by the loader; nothing is stored or
// indexed. The Core is real (embedded broker, HTTP API), the MQTT client a real connection.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { topics } from '../../src/protocol/topics.js';
import type { RegistrationAck } from '../../src/protocol/types.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';

let core: TestCore;
let client: TestClient;
let pluginsDir: string;

function capabilities(count: number): object[] {
  return Array.from({ length: count }, (_, i) => ({ id: `cap_${i}`, description: `Capability number ${i}` }));
}

beforeAll(async () => {
  pluginsDir = mkdtempSync(join(tmpdir(), 'homeclaw-limits-plugins-'));
  mkdirSync(join(pluginsDir, 'hoarder'));
  const manifest = ['id: hoarder', 'name: Hoarder', 'description: A built-in with too many capabilities.', 'capabilities:'];
  for (let i = 0; i < 6; i++) manifest.push(`  - { id: cap_${i}, name: Cap ${i}, description: Capability ${i} }`);
  writeFileSync(join(pluginsDir, 'hoarder', 'plugin.yaml'), `${manifest.join('\n')}\n`);
  writeFileSync(join(pluginsDir, 'hoarder', 'index.js'), Array.from({ length: 6 }, (_, i) => `export function cap_${i}() { return 'ok'; }`).join('\n'));
  core = await startTestCore({ pluginsDir, overrides: { limits: { max_capabilities: 5, max_examples: 3 } } });
  client = await connectTestClient(core.mqttUrl);
});

afterAll(async () => {
  await client?.end(true);
  await core?.cleanup();
});

describe('registration limits', () => {
  it('refuses an MQTT registration over limits.max_capabilities with an ack naming the limit', async () => {
    await client.subscribe(topics.registered('greedy'));
    const ack = client.waitFor(topics.registered('greedy'));
    await client.publish(topics.register(), { id: 'greedy', name: 'Greedy', description: 'Too much', epoch: 1, capabilities: capabilities(6) });
    const body = (await ack).json<RegistrationAck>();
    expect(body.ok).toBe(false);
    expect(body.errors).toEqual([
      { path: '/capabilities', message: 'plugin "greedy" declares 6 capabilities; at most 5 are allowed per plugin (limits.max_capabilities)' },
    ]);
    expect((await core.api('GET', '/api/plugins/greedy')).status).toBe(404);
  });

  it('accepts a registration at the limits over MQTT', async () => {
    await client.subscribe(topics.registered('modest'));
    const ack = client.waitFor(topics.registered('modest'));
    await client.publish(topics.register(), {
      id: 'modest',
      name: 'Modest',
      description: 'Exactly at the limits',
      epoch: 1,
      examples: ['one', 'two', 'three'],
      capabilities: capabilities(5),
    });
    expect((await ack).json<RegistrationAck>()).toMatchObject({ plugin_id: 'modest', ok: true });
  });

  it('refuses an HTTP registration over limits.max_examples with 400 and every exceeded limit', async () => {
    const response = await core.api<{ statusCode: number; message: string; problems: { path: string; message: string }[] }>('POST', '/api/plugins/register', {
      id: 'chatty',
      name: 'Chatty',
      description: 'Too many examples',
      type: 'http',
      health_check_url: 'http://127.0.0.1:9/health',
      config: { base_url: 'http://127.0.0.1:9' },
      examples: ['a', 'b', 'c', 'd'],
      capabilities: capabilities(7),
    });
    expect(response.status).toBe(400);
    expect(response.body.problems).toEqual([
      { path: '/capabilities', message: 'plugin "chatty" declares 7 capabilities; at most 5 are allowed per plugin (limits.max_capabilities)' },
      { path: '/examples', message: 'plugin "chatty" declares 4 examples; at most 3 are allowed per plugin (limits.max_examples)' },
    ]);
    expect(response.body.message).toMatch(/limits\.max_examples/);
    expect((await core.api('GET', '/api/plugins/chatty')).status).toBe(404);
    const search = await core.api<{ hits: { plugin_id: string }[] }>('GET', '/api/plugins/search?q=chatty%20examples&k=10');
    expect(search.body.hits.map((h) => h.plugin_id)).not.toContain('chatty');
  });

  it('reports a built-in manifest over the limits and does not register it', async () => {
    const status = await core.api<{ builtins: { plugin_id?: string; state: string; error?: string }[] }>('GET', '/api/status');
    const hoarder = status.body.builtins.find((b) => b.plugin_id === 'hoarder');
    expect(hoarder).toMatchObject({ state: 'error' });
    expect(hoarder?.error).toMatch(/declares 6 capabilities; at most 5 are allowed per plugin \(limits\.max_capabilities\)/);
    expect((await core.api('GET', '/api/plugins/hoarder')).status).toBe(404);
  });
});

describe('default limits', () => {
  it('allow 256 capabilities and 32 examples per plugin, and no more', () => {
    const log = silentLogger();
    const registry = new Registry({ db: new Database(':memory:'), events: new TypedEventBus(log), log });
    const descriptor = (caps: number, examples: number) => ({
      id: 'big',
      name: 'Big',
      description: 'Big plugin',
      examples: Array.from({ length: examples }, (_, i) => `example ${i}`),
      capabilities: Array.from({ length: caps }, (_, i) => ({ id: `c${i}`, name: `C${i}`, description: `c ${i}`, parameters: [], post_process: false })),
      source: 'external' as const,
      type: 'http' as const,
      config: {},
    });
    expect(registry.register({ descriptor: descriptor(256, 32), owner: 'api' }).ok).toBe(true);
    const over = registry.register({ descriptor: descriptor(257, 33), owner: 'api' });
    expect(over).toMatchObject({ ok: false, code: 'limit' });
    expect(over.ok ? [] : over.errors.map((e) => e.message)).toEqual([
      'plugin "big" declares 257 capabilities; at most 256 are allowed per plugin (limits.max_capabilities)',
      'plugin "big" declares 33 examples; at most 32 are allowed per plugin (limits.max_examples)',
    ]);
    expect(registry.get('big')?.descriptor.capabilities).toHaveLength(256);
  });
});

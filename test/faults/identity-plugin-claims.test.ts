// Attack (a lock-out): a plugin registered while the Core ran in anonymous loopback mode is owned by its
// MQTT client id; after the switch to LAN mode (credentials required) the same plugin, now logging in
// with a credential for that id, was refused its own id forever. Defence: an id whose owner was an
// anonymous client is claimed by a plugin credential that lists the id; an admin can also move an id to
// another credential with `homeclaw plugins transfer <id> <credential>`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { RegistrationAck } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { ensureBuilt } from '../e2e/helpers.js';
import { homeclaw } from './identity-helpers.js';

let core: TestCore;
let dataDir: string;
const clients: ChildClient[] = [];

function descriptor(id: string): Record<string, unknown> {
  return {
    id,
    name: id,
    description: `The ${id} plugin.`,
    capabilities: [{ id: 'run', name: 'Run', description: 'Run it.', parameters: [] }],
    epoch: Date.now(),
  };
}

/** Registers `id` from a separate MQTT client process; resolves with the ack it receives. */
async function registerAs(id: string, login: { username?: string; password?: string; clientId: string }): Promise<RegistrationAck> {
  const client = new ChildClient({ url: core.mqttUrl, ...login });
  clients.push(client);
  await client.connected();
  await client.subscribe(topics.registered(id));
  await client.subscribe(topics.registeredInvalid());
  await client.publish(topics.register(), JSON.stringify(descriptor(id)));
  const event = await client.waitFor((e) => e.event === 'message' && (e.topic === topics.registered(id) || e.topic === topics.registeredInvalid()));
  return JSON.parse(event.payload ?? '{}') as RegistrationAck;
}

async function credential(name: string, pluginIds: string[]): Promise<string> {
  const res = await core.api<{ password: string }>('POST', '/api/credentials', { name, role: 'plugin', plugin_ids: pluginIds });
  expect(res.status).toBe(201);
  return res.body.password;
}

beforeAll(async () => {
  await ensureBuilt();
  dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-claims-'));
  // Development first: anonymous loopback.
  core = await startTestCore({ dataDir });
  expect(await registerAs('pyweather', { clientId: 'pyweather-dev' })).toMatchObject({ ok: true });
  expect(core.ctx.registry.get('pyweather')?.owner).toBe('mqtt:client:pyweather-dev');
  await core.cleanup({ keepData: true });
  // Then the LAN: credentials required, same data.
  core = await startTestCore({ dataDir, overrides: { broker: { allow_anonymous: false } } });
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.end();
  await core?.cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('ids after the switch from loopback to LAN mode', () => {
  it('a plugin credential that lists the id claims it from the anonymous owner', async () => {
    const password = await credential('weather', ['pyweather']);
    const ack = await registerAs('pyweather', { username: 'weather', password, clientId: 'pyweather' });
    expect(ack).toMatchObject({ plugin_id: 'pyweather', ok: true });
    expect(core.ctx.registry.get('pyweather')).toMatchObject({ owner: 'mqtt:user:weather', state: 'online' });
  });

  it('once claimed, another credential listing the same id cannot take it', async () => {
    const password = await credential('intruder', ['pyweather']);
    const ack = await registerAs('pyweather', { username: 'intruder', password, clientId: 'intruder' });
    expect(ack.ok).toBe(false);
    expect(JSON.stringify(ack.errors)).toMatch(/already registered by another client/);
    expect(core.ctx.registry.get('pyweather')?.owner).toBe('mqtt:user:weather');
  });
});

describe('homeclaw plugins transfer', () => {
  it('moves an id to another credential: the new one registers it, the old one is refused', async () => {
    const env = { HOMECLAW_URL: core.httpUrl, HOMECLAW_ADMIN_TOKEN: core.adminToken };
    const oldPassword = await credential('lamp-old', ['lamp']);
    expect(await registerAs('lamp', { username: 'lamp-old', password: oldPassword, clientId: 'lamp-a' })).toMatchObject({ ok: true });
    const newPassword = await credential('lamp-new', []);
    const moved = await homeclaw(['plugins', 'transfer', 'lamp', 'lamp-new'], env);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toContain('lamp now belongs to credential lamp-new');
    expect(core.ctx.registry.get('lamp')?.owner).toBe('mqtt:user:lamp-new');
    expect(await registerAs('lamp', { username: 'lamp-new', password: newPassword, clientId: 'lamp-b' })).toMatchObject({ ok: true });
    expect((await registerAs('lamp', { username: 'lamp-old', password: oldPassword, clientId: 'lamp-c' })).ok).toBe(false);
  });

  it('refuses what cannot be transferred, with a clear error, changing nothing', async () => {
    await core.api('POST', '/api/credentials', { name: 'tablet', role: 'channel' });
    const cases: [string, string, number, RegExp][] = [
      ['nosuch', 'lamp-new', 404, /no plugin "nosuch"/],
      ['lamp', 'nobody', 400, /no credential "nobody"/],
      ['lamp', 'tablet', 400, /role channel.*plugin/],
      ['lamp', 'Bad Name', 400, /credential/],
    ];
    for (const [id, to, status, message] of cases) {
      const res = await core.api<{ message: string }>('POST', `/api/plugins/${encodeURIComponent(id)}/transfer`, { credential: to });
      expect(res.status, `${id} → ${to}`).toBe(status);
      expect(res.body.message).toMatch(message);
    }
    expect(core.ctx.registry.get('lamp')?.owner).toBe('mqtt:user:lamp-new');
  });
});

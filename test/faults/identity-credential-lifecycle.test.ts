// Attack: a leaked MQTT password could not be revoked: there was no `homeclaw credentials remove|rotate`,
// and a session already logged in stayed connected. Defence: `credentials remove <name>` deletes the
// login and disconnects its live sessions (embedded broker); `credentials rotate <name>` prints a new
// password, refuses the old one and disconnects sessions that logged in with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { ensureBuilt } from '../e2e/helpers.js';
import { homeclaw } from './identity-helpers.js';

let core: TestCore;
let env: Record<string, string>;
const clients: ChildClient[] = [];

async function tryLogin(username: string, password: string): Promise<ChildClient> {
  const client = new ChildClient({ url: core.mqttUrl, username, password });
  clients.push(client);
  await client.waitFor((e) => e.event === 'connect' || e.event === 'error' || e.event === 'close');
  return client;
}

const connected = (client: ChildClient): boolean => client.events.some((e) => e.event === 'connect');

beforeAll(async () => {
  await ensureBuilt();
  core = await startTestCore({ overrides: { broker: { allow_anonymous: false } } });
  env = { HOMECLAW_URL: core.httpUrl, HOMECLAW_ADMIN_TOKEN: core.adminToken };
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.end();
  await core?.cleanup();
});

describe('credentials remove and rotate', () => {
  it('rotate prints a new password, refuses the old one and disconnects the session that used it', async () => {
    const added = await homeclaw(['credentials', 'add', 'telegram', '--role', 'channel', '--json'], env);
    expect(added.code, added.stderr).toBe(0);
    const oldPassword = (JSON.parse(added.stdout) as { password: string }).password;
    const live = await tryLogin('telegram', oldPassword);
    expect(connected(live)).toBe(true);
    expect(await live.subscribe(topics.channelOut('telegram'))).toEqual([1]);

    const rotated = await homeclaw(['credentials', 'rotate', 'telegram'], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    const newPassword = /password: (\S+)/.exec(rotated.stdout)?.[1];
    expect(newPassword).toBeDefined();
    expect(newPassword).not.toBe(oldPassword);
    expect(rotated.stdout).toMatch(/disconnected 1 session/);
    await live.waitFor((e) => e.event === 'close');

    const withOld = await tryLogin('telegram', oldPassword);
    expect(connected(withOld)).toBe(false);
    const withNew = await tryLogin('telegram', newPassword!);
    expect(connected(withNew)).toBe(true);
  });

  it('remove deletes the login and disconnects its live sessions', async () => {
    const added = await homeclaw(['credentials', 'add', 'weather', '--role', 'plugin', '--json'], env);
    const password = (JSON.parse(added.stdout) as { password: string }).password;
    const first = await tryLogin('weather', password);
    const second = new ChildClient({ url: core.mqttUrl, username: 'weather', password, clientId: 'weather-2' });
    clients.push(second);
    await second.connected();
    expect(connected(first)).toBe(true);

    const removed = await homeclaw(['credentials', 'remove', 'weather'], env);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toMatch(/removed weather; disconnected 2 sessions/);
    await first.waitFor((e) => e.event === 'close');
    await second.waitFor((e) => e.event === 'close');
    expect(connected(await tryLogin('weather', password))).toBe(false);
    const listed = await homeclaw(['credentials', 'list'], env);
    expect(listed.stdout).not.toMatch(/^weather\b/m);
    expect(listed.stdout).toMatch(/^telegram\s+channel/m);
  });

  it('unknown names are a clear error and change nothing', async () => {
    const remove = await homeclaw(['credentials', 'remove', 'nobody'], env);
    expect(remove.code).toBe(1);
    expect(remove.stderr).toMatch(/no credential "nobody"/);
    const rotate = await homeclaw(['credentials', 'rotate', 'Bad Name'], env);
    expect(rotate.code).toBe(1);
    expect(core.ctx.credentials.list().map((c) => c.name)).toEqual(['telegram']);
  });
});

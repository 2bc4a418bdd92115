// Attack (a read and a lock-out through someone else's MQTT client id): any login could connect with the
// client id of another login's client while that client was offline. With a persistent session (clean
// session off) the broker handed the thief the victim's stored subscriptions, so the victim's invokes,
// parameters and all, went to the thief without any subscribe check; and with the SDK's predictable id
// (`homeclaw-plugin-<id>`) the thief, once connected, kept the real plugin out ("identifier rejected")
// for as long as it stayed. Defence: a client id belongs to the login that used it first, in the
// database, until that credential is removed; the SDK's id of a plugin goes to whoever owns the plugin.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ChildClient, type ChildClientOptions } from '../fixtures/bus/child-client.js';
import { startChildPlugin, type ChildPlugin } from '../fixtures/sdk/child-plugin.js';
import { ensureBuilt, REPO_ROOT } from '../e2e/helpers.js';
import { settle } from './identity-helpers.js';

const PLUGIN_PROCESS = join(REPO_ROOT, 'test', 'fixtures', 'sdk', 'plugin-process.mjs');

let core: TestCore;
const clients: ChildClient[] = [];
const plugins: ChildPlugin[] = [];
const passwords = new Map<string, string>();

async function credential(name: string, pluginIds: string[] = [name]): Promise<string> {
  const res = await core.api<{ password: string }>('POST', '/api/credentials', { name, role: 'plugin', plugin_ids: pluginIds });
  expect(res.status).toBe(201);
  passwords.set(name, res.body.password);
  return res.body.password;
}

function client(options: Omit<ChildClientOptions, 'url'>): ChildClient {
  const child = new ChildClient({ url: core.mqttUrl, ...options });
  clients.push(child);
  return child;
}

function login(name: string): { username: string; password: string } {
  return { username: name, password: passwords.get(name)! };
}

/** An SDK plugin process logging in as `name` (credentials in the URL), with the SDK's default client id. */
function sdkPlugin(pluginId: string, name: string): ChildPlugin {
  const url = new URL(core.mqttUrl);
  url.username = name;
  url.password = passwords.get(name)!;
  const plugin = startChildPlugin(process.execPath, [PLUGIN_PROCESS, url.toString(), pluginId, '1']);
  plugins.push(plugin);
  return plugin;
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what}: not in time`);
    await settle(50);
  }
}

const REFUSED = /Identifier rejected|"code":2\b/i;

beforeAll(async () => {
  await ensureBuilt();
  core = await startTestCore();
  await credential('lights');
  await credential('weather');
}, 120_000);

afterAll(async () => {
  for (const c of clients) await c.crash().catch(() => undefined);
  for (const p of plugins) await p.stop('SIGKILL').catch(() => undefined);
  await core?.cleanup();
});

describe("another login's client id", () => {
  it("cannot be used to take over a persistent session and read that login's invokes", async () => {
    const victim = client({ clientId: 'lights-session', clean: false, ...login('lights') });
    await victim.connected();
    expect(await victim.subscribe(topics.invoke('lights'))).toEqual([1]);
    await victim.crash();

    const thief = client({ clientId: 'lights-session', clean: false, ...login('weather') });
    await expect(thief.connected()).rejects.toThrow(REFUSED);
    await core.ctx.bus.publish(topics.invoke('lights'), JSON.stringify({ secret: 'door code 1234' }), { qos: 1 });
    await settle(200);
    expect(thief.messages(topics.invoke('lights'))).toEqual([]);

    // Nothing was lost: the owner resumes its session and gets the invoke queued for it.
    const back = client({ clientId: 'lights-session', clean: false, ...login('lights') });
    await back.connected();
    const queued = await back.message(topics.invoke('lights'));
    expect(queued.payload).toContain('door code 1234');
  });

  it('cannot be held to keep an SDK plugin out while it is offline, even by an anonymous client', async () => {
    const first = sdkPlugin('lights', 'lights');
    await first.registered;
    await first.stop('SIGKILL');

    const squatter = client({ clientId: 'homeclaw-plugin-lights', ...login('weather') });
    await expect(squatter.connected()).rejects.toThrow(REFUSED);
    const anonymous = client({ clientId: 'homeclaw-plugin-lights' });
    await expect(anonymous.connected()).rejects.toThrow(REFUSED);

    const again = sdkPlugin('lights', 'lights');
    await again.registered;
    await until(() => core.ctx.registry.get('lights')?.state === 'online', 'lights online again');
    const result = await core.api<{ success: boolean; text: string }>('POST', '/v1/plugins/lights/tools/echo/run', { text: 'on' });
    expect(result.body).toMatchObject({ success: true, text: 'echo: on' });
    await again.stop('SIGKILL');
  });

  it('an SDK plugin refused its id says why', async () => {
    const intruder = sdkPlugin('lights', 'weather');
    await expect(intruder.registered).rejects.toThrow(/client id "homeclaw-plugin-lights" is taken: another login holds it/);
  });

  it('the Python example refused its id says why', async () => {
    const python = startChildPlugin('/usr/bin/python3', [
      join(REPO_ROOT, 'scripts', 'examples', 'python', 'weather_plugin.py'),
      ...['--url', core.mqttUrl, '--id', 'lights', '--username', 'weather', '--password', passwords.get('weather')!],
    ]);
    plugins.push(python);
    await until(() => python.stderr().includes('connection refused'), 'the refusal on stderr');
    expect(python.stderr()).toContain('connection refused: identifier rejected: this client id belongs to another login');
    await python.stop('SIGKILL');
  });

  it('stays with its login across a Core restart', async () => {
    const dataDir = core.dataDir;
    await core.cleanup({ keepData: true });
    core = await startTestCore({ dataDir });
    const squatter = client({ clientId: 'homeclaw-plugin-lights', ...login('weather') });
    await expect(squatter.connected()).rejects.toThrow(REFUSED);
  });

  it('follows the plugin id when an admin transfers it to another credential', async () => {
    await credential('lights-new', []);
    const moved = await core.api('POST', '/api/plugins/lights/transfer', { credential: 'lights-new' });
    expect(moved.status).toBe(200);
    const plugin = sdkPlugin('lights', 'lights-new');
    await plugin.registered;
    expect(core.ctx.registry.get('lights')).toMatchObject({ owner: 'mqtt:user:lights-new', state: 'online' });
    await plugin.stop('SIGKILL');
    // ...and the old credential no longer gets it back.
    const old = client({ clientId: 'homeclaw-plugin-lights', ...login('lights') });
    await expect(old.connected()).rejects.toThrow(REFUSED);
  });

  it("goes to the plugin's owner even when another client took it first and holds it", async () => {
    await credential('garage');
    const squatter = client({ clientId: 'homeclaw-plugin-garage', ...login('weather') });
    await squatter.connected();
    const plugin = sdkPlugin('garage', 'garage');
    await plugin.registered;
    await squatter.waitFor((e) => e.event === 'close', 5_000);
    const result = await core.api<{ success: boolean; text: string }>('POST', '/v1/plugins/garage/tools/echo/run', { text: 'open' });
    expect(result.body).toMatchObject({ success: true, text: 'echo: open' });
    // From then on the id is the owner's: the squatter cannot come back.
    const again = client({ clientId: 'homeclaw-plugin-garage', ...login('weather') });
    await expect(again.connected()).rejects.toThrow(REFUSED);
    await plugin.stop('SIGKILL');
  });

  it('is free for others once the credential that held it is removed', async () => {
    const removed = await core.api('DELETE', '/api/credentials/lights');
    expect(removed.status).toBe(200);
    const next = client({ clientId: 'lights-session', ...login('weather') });
    await next.connected();
    expect(next.events.some((e) => e.event === 'close')).toBe(false);
  });
});

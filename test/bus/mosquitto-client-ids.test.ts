// Another login's client id on a real Mosquitto, configured as docs/external-broker-acl.md says (its
// ACL has a plugin block for "weather" only, so "weather" is the plugin and "lights" the intruder). MQTT
// lets a connection with a client id in use take that session over: with the ACL alone another login knocks a
// plugin off (but reads nothing the ACL denies it); with the documented mosquitto.conf lines it cannot,
// and the Core and an SDK plugin work as before.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { startCore, type RunningCore } from '../../src/main.js';
import { sdkClientId } from '../../src/protocol/ids.js';
import { topics } from '../../src/protocol/topics.js';
import { testConfig } from '../helpers/core.js';
import { aclFromDocs, mosquittoConfFromDocs } from '../helpers/external-broker-docs.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { startChildPlugin, type ChildPlugin } from '../fixtures/sdk/child-plugin.js';
import { ensureBuilt, REPO_ROOT } from '../e2e/helpers.js';

const USERS = { 'homeclaw-core': 'homeclaw-core-secret', lights: 'lights-secret', weather: 'weather-secret' };
const PLUGIN_PROCESS = join(REPO_ROOT, 'test', 'fixtures', 'sdk', 'plugin-process.mjs');

let mosquitto: MosquittoHandle | undefined;
let core: RunningCore | undefined;
let dataDir: string | undefined;
const clients: ChildClient[] = [];
const plugins: ChildPlugin[] = [];

function client(login: keyof typeof USERS, clientId: string, clean = true): ChildClient {
  const child = new ChildClient({ url: mosquitto!.url, username: login, password: USERS[login], clientId, clean });
  clients.push(child);
  return child;
}

async function startCoreOn(broker: MosquittoHandle): Promise<RunningCore> {
  dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-client-ids-'));
  const config = testConfig(dataDir, { overrides: { broker: { url: broker.url, username: 'homeclaw-core', password: USERS['homeclaw-core'] } } });
  return startCore({ config, log: silentLogger() });
}

const closed = (child: ChildClient): boolean => child.events.some((e) => e.event === 'close');

beforeAll(async () => {
  await ensureBuilt();
}, 120_000);

afterEach(async () => {
  for (const child of clients.splice(0)) await child.crash().catch(() => undefined);
  for (const plugin of plugins.splice(0)) await plugin.stop('SIGKILL').catch(() => undefined);
  await core?.stop();
  core = undefined;
  await mosquitto?.stop();
  mosquitto = undefined;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("another login's client id on Mosquitto", () => {
  it('with the ACL alone: the newcomer knocks the plugin off, yet reads none of its invokes', async () => {
    mosquitto = await startMosquitto({ users: USERS, acl: aclFromDocs() });
    core = await startCoreOn(mosquitto);
    const weather = client('weather', sdkClientId('weather'), false);
    await weather.connected();
    expect(await weather.subscribe(topics.invoke('weather'))).toEqual([1]);

    const thief = client('lights', sdkClientId('weather'), false);
    await thief.connected();
    await weather.waitFor((e) => e.event === 'close', 5_000);
    await core.ctx.bus.publish(topics.invoke('weather'), JSON.stringify({ request_id: 'r-secret' }), { qos: 1 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(thief.messages(topics.invoke('weather'))).toEqual([]);
  });

  it('with the documented mosquitto.conf lines: the plugin stays connected and served', async () => {
    mosquitto = await startMosquitto({ users: USERS, acl: aclFromDocs(), extraConfig: mosquittoConfFromDocs() });
    core = await startCoreOn(mosquitto);
    const url = new URL(mosquitto.url);
    url.username = 'weather';
    url.password = USERS.weather;
    const plugin = startChildPlugin(process.execPath, [PLUGIN_PROCESS, url.toString(), 'weather', '1']);
    plugins.push(plugin);
    await plugin.registered;

    const thief = client('lights', sdkClientId('weather'));
    await thief.connected();
    await thief.subscribe(topics.invoke('weather')).catch(() => [128]);
    const running = core;
    const result = await running.ctx.dispatcher.invoke({ plugin_id: 'weather', capability_id: 'echo', parameters: { text: 'still mine' } });
    expect(result).toMatchObject({ success: true, text: 'echo: still mine' });
    // Had the newcomer taken the plugin's session, the plugin (reconnecting every 200 ms) would take it back.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(thief.messages(topics.invoke('weather'))).toEqual([]);
    expect(closed(thief)).toBe(false);
    expect(running.ctx.registry.get('weather')?.state).toBe('online');
  });
});

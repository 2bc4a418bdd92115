// The documented Mosquitto ACL (docs/external-broker-acl.md: the acl-file block plus the block for Home
// Assistant's own user) with discovery on: the Core publishes its devices and reads Home Assistant's
// birth, Home Assistant reads devices and states and presses buttons, and nobody else does.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../../src/protocol/topics.js';
import { startTestCore, type TestCore } from '../../helpers/core.js';
import { startMosquitto, type MosquittoHandle } from '../../helpers/mosquitto.js';
import { connectTestClient, type TestClient } from '../../helpers/mqtt-client.js';
import { makePluginsDir } from '../../e2e/helpers.js';
import { aclWithHomeAssistantFromDocs } from '../../helpers/external-broker-docs.js';

let mosquitto: MosquittoHandle;
let core: TestCore;
let pluginsDir: string;
const clients: TestClient[] = [];
const login = async (name: string): Promise<TestClient> => {
  const client = await connectTestClient(mosquitto.url, { username: name, password: `${name}-secret`, clientId: `${name}-client`, protocolVersion: 5 });
  clients.push(client);
  return client;
};

beforeAll(async () => {
  const users = ['homeclaw-core', 'homeassistant', 'automations', 'telegram'];
  mosquitto = await startMosquitto({ users: Object.fromEntries(users.map((u) => [u, `${u}-secret`])), acl: aclWithHomeAssistantFromDocs() });
  pluginsDir = makePluginsDir({ shipped: [{ id: 'time' }] });
  core = await startTestCore({
    pluginsDir,
    overrides: { broker: { url: mosquitto.url, username: 'homeclaw-core', password: 'homeclaw-core-secret' }, homeassistant: { discovery: true } },
  });
}, 60_000);

afterAll(async () => {
  for (const client of clients) await client.end(true);
  await core?.cleanup();
  await mosquitto?.stop();
  rmSync(pluginsDir, { recursive: true, force: true });
});

describe('documented ACL with Home Assistant discovery', () => {
  it("Home Assistant's user sees the devices and states, and its button presses run", async () => {
    const ha = await login('homeassistant');
    await ha.subscribe('homeassistant/device/+/config');
    await ha.subscribe('homeclaw/ha/#');
    await ha.waitFor(topics.haDiscovery('homeassistant', 'homeclaw_core'));
    await ha.waitFor(topics.haDiscovery('homeassistant', 'homeclaw_time'));
    await ha.waitFor(topics.haPluginState('time'));
    const mark = ha.received.length;
    await ha.publish(topics.haPress('time', 'now'), 'PRESS');
    await ha.waitFor(topics.haPluginState('time'), (m) => ha.received.indexOf(m) >= mark && m.json<{ last_outcome: string }>().last_outcome === 'success');
  });

  it("Home Assistant's birth reaches the Core through the ACL", async () => {
    const ha = await login('homeassistant');
    await ha.subscribe(topics.haDiscovery('homeassistant', 'homeclaw_core'));
    await ha.waitFor(topics.haDiscovery('homeassistant', 'homeclaw_core'));
    const mark = ha.received.length;
    await ha.publish(topics.haStatus('homeassistant'), 'online');
    const again = await ha.waitFor(topics.haDiscovery('homeassistant', 'homeclaw_core'), (m) => ha.received.indexOf(m) >= mark);
    expect(again.payload.length).toBeGreaterThan(0);
  });

  it('callers and channels neither read the devices nor press buttons', async () => {
    const before = core.ctx.dispatcher.getStats().invoked;
    for (const name of ['automations', 'telegram']) {
      const client = await login(name);
      await client.subscribe('homeassistant/device/+/config').catch(() => undefined);
      // MQTT 5 tells the publisher: PUBACK "Not authorized".
      await expect(client.publish(topics.haPress('time', 'now'), 'PRESS')).rejects.toThrow(/Not authorized/);
      expect(await client.quiet('homeassistant/device/+/config', 300)).toBe(true);
    }
    await new Promise((r) => setTimeout(r, 300));
    expect(core.ctx.dispatcher.getStats().invoked).toBe(before);
  });
});

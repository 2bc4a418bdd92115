// Attack (keeping another plugin from starting). A plugin login sending `unregister` for another plugin's
// id was refused, but the refusal went out on that id's ack topic, registered/<id>, which its owner reads:
// the owner's SDK took it for the answer to its own registration, and a refusal is final, so a flood of
// such unregisters (250/s) made the plugin fail to start with "owned by another client". Defence: an
// unregister of an id the sender's credential does not allow is answered on registered/_invalid to the
// sender alone, and changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import { connectPlugin, silentSdkLogger } from '../../src/sdk/index.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { makePluginsDir } from '../e2e/helpers.js';

let core: TestCore;
const clients: ChildClient[] = [];

async function login(name: string, pluginIds: string[]): Promise<ChildClient> {
  const password = (await core.api<{ password: string }>('POST', '/api/credentials', { name, role: 'plugin', plugin_ids: pluginIds })).body.password;
  const client = new ChildClient({ url: core.mqttUrl, clientId: `${name}-client`, username: name, password });
  clients.push(client);
  await client.connected();
  return client;
}

beforeAll(async () => {
  core = await startTestCore({ pluginsDir: makePluginsDir({ shipped: [] }), overrides: { broker: { allow_anonymous: false } } });
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.end();
  await core?.cleanup();
});

describe("an unregister of another plugin's id", () => {
  it("is answered to the sender alone, and the owner's registration is not disturbed by a flood of them", async () => {
    const evil = await login('evil', ['evil']);
    await evil.subscribe(topics.registeredInvalid());
    const victimPassword = (await core.api<{ password: string }>('POST', '/api/credentials', { name: 'victim', role: 'plugin', plugin_ids: ['victim'] })).body
      .password;

    let flooding = true;
    const flood = (async () => {
      while (flooding) {
        await evil.publish(topics.unregister(), JSON.stringify({ plugin_id: 'victim' }));
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const victim = await connectPlugin({
          url: core.mqttUrl,
          credentials: { username: 'victim', password: victimPassword },
          log: silentSdkLogger(),
          descriptor: {
            id: 'victim',
            name: 'Victim',
            description: 'Starts while another login floods.',
            capabilities: [{ id: 'run', description: 'Run it.', parameters: [] }],
          },
          handlers: { run: () => 'ran' },
        });
        await victim.close();
      }
    } finally {
      flooding = false;
      await flood;
    }
    const refusal = JSON.parse((await evil.message(topics.registeredInvalid())).payload ?? '{}') as { ok: boolean; errors: { message: string }[] };
    expect(refusal.ok).toBe(false);
    expect(refusal.errors[0]?.message).toMatch(/credentials do not allow the plugin id "victim"/);
  });
});

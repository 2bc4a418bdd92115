// Attack (a persistent session keeps refused subscriptions). With clean: false, Aedes stores a session's
// filters so that messages published while the client is away wait for it. It stored every filter of a
// SUBSCRIBE packet once one of them was granted, the refused ones too, and handed their queue over on
// reconnect without another check: a plugin login that subscribed to its own invoke topic together with
// `homeclaw/#` (refused, SUBACK 0x80) received, on its next visit, every call sent to other plugins with
// their parameters, and their results; the queue for the refused filter also grew without bound while it
// was away. Defence: only the filters the login may subscribe to are stored with its session.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import { connectPlugin, silentSdkLogger, type ConnectedPlugin } from '../../src/sdk/index.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { makePluginsDir } from '../e2e/helpers.js';

let core: TestCore;
let victim: ConnectedPlugin;
let password: string;

const connectEvil = async (): Promise<ChildClient> => {
  const client = new ChildClient({ url: core.mqttUrl, clientId: 'evil-persist', clean: false, username: 'evil', password });
  await client.connected();
  return client;
};

const store = async (secret: string): Promise<void> => {
  const answer = await core.api<{ success: boolean }>('POST', '/v1/plugins/victim/tools/store/run', { secret });
  expect(answer.body.success).toBe(true);
};

beforeAll(async () => {
  core = await startTestCore({ pluginsDir: makePluginsDir({ shipped: [] }) });
  password = (await core.api<{ password: string }>('POST', '/api/credentials', { name: 'evil', role: 'plugin', plugin_ids: ['evil'] })).body.password;
  victim = await connectPlugin({
    url: core.mqttUrl,
    log: silentSdkLogger(),
    descriptor: {
      id: 'victim',
      name: 'Victim',
      description: 'Keeps a secret.',
      capabilities: [{ id: 'store', description: 'Store a secret.', parameters: [{ name: 'secret', type: 'string', required: true }] }],
    },
    handlers: { store: ({ secret }) => `stored ${String(secret)}` },
  });
}, 120_000);

afterAll(async () => {
  await victim?.close();
  await core?.cleanup();
});

describe('a persistent session of a plugin login', () => {
  it('keeps only the filters it was granted: calls to other plugins never reach it, now or on its return', async () => {
    const first = await connectEvil();
    expect(await first.subscribe([topics.invoke('evil'), 'homeclaw/#', topics.invoke('victim')])).toEqual([1, 128, 128]);
    await store('LIVE-1');
    await first.end();

    await store('WHILE-AWAY-42');
    const back = await connectEvil();
    // One more call after the return: whatever the session still had has been delivered by the time it ends.
    await store('AFTER-RETURN');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const seen = [...first.events, ...back.events].filter((event) => event.event === 'message').map((event) => `${event.topic} ${event.payload ?? ''}`);
    expect(seen).toEqual([]);
    await back.end();
  });
});

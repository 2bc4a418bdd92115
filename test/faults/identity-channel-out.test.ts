// Attack (writing into another user's device). A channel bound to a user (a kitchen tablet whose channel
// login speaks for bob) only accepted bob's messages, but anything could be sent out to it: a user token
// for alice posting `{"channel": "kitchen", "async": true}` to /api/messages had the reply published on
// channels/kitchen/out, and a reminder or notification for alice could name that channel too. The text is
// partly alice's to choose (an unknown command is quoted back), so bob's tablet showed what alice wrote.
// Defence: a channel bound to users (access.channels.<ch>.users, or channel credentials acting for it)
// carries messages only for them: the async reply is refused with 403 and the notification with
// `forbidden`, each naming the channel's users; an unbound channel carries anyone's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { makePluginsDir } from '../e2e/helpers.js';
import { callApi } from './identity-helpers.js';

let core: TestCore;
let watcher: ChildClient;
let aliceToken: string;
let bobToken: string;

beforeAll(async () => {
  core = await startTestCore({ pluginsDir: makePluginsDir({ shipped: [{ id: 'time' }] }) });
  aliceToken = (await core.api<{ token: string }>('POST', '/api/users', { user_id: 'alice' })).body.token;
  bobToken = (await core.api<{ token: string }>('POST', '/api/users', { user_id: 'bob' })).body.token;
  expect((await core.api('POST', '/api/credentials', { name: 'kitchen', role: 'channel', users: ['bob'] })).status).toBe(201);
  // Loopback and anonymous: may read every topic, like the tablet would read its own.
  watcher = new ChildClient({ url: core.mqttUrl, clientId: 'out-watcher' });
  await watcher.connected();
  await watcher.subscribe(topics.channelOut('kitchen'));
  await watcher.subscribe(topics.channelOut('web'));
}, 120_000);

afterAll(async () => {
  await watcher?.end();
  await core?.cleanup();
});

describe("a channel bound to another user's device", () => {
  it('refuses an async reply for anyone else with 403 naming its users, and publishes nothing there', async () => {
    const refused = await callApi(core.httpUrl, aliceToken, 'POST', '/api/messages', { channel: 'kitchen', async: true, text: '/nope "EVACUATE NOW"' });
    expect(refused.status).toBe(403);
    expect(String(refused.body['message'])).toMatch(/channel "kitchen" carries messages only for "bob", not for "alice"/);

    // Bob's own reply goes there; it is the only message the tablet ever sees.
    const accepted = await callApi(core.httpUrl, bobToken, 'POST', '/api/messages', { channel: 'kitchen', async: true, text: '/help' });
    expect(accepted.status).toBe(202);
    await watcher.message(topics.channelOut('kitchen'), 10_000);
    expect(watcher.messages(topics.channelOut('kitchen')).map((m) => (JSON.parse(m.payload ?? '{}') as { user_id: string }).user_id)).toEqual(['bob']);
  });

  it("carries anyone's messages on an unbound channel", async () => {
    const accepted = await callApi(core.httpUrl, aliceToken, 'POST', '/api/messages', { channel: 'web', async: true, text: '/help' });
    expect(accepted.status).toBe(202);
    const reply = JSON.parse((await watcher.message(topics.channelOut('web'), 10_000)).payload ?? '{}') as { user_id: string };
    expect(reply.user_id).toBe('alice');
  });

  it('refuses a notification for anyone else on it (a reminder naming the channel, a plugin notify)', async () => {
    expect(await core.ctx.notifier.notify({ user_id: 'alice', text: 'the alarm code changed', channel: 'kitchen' })).toMatchObject({
      ok: false,
      error_code: 'forbidden',
      error: expect.stringMatching(/carries messages only for "bob"/),
    });
    expect(await core.ctx.notifier.notify({ user_id: 'bob', text: 'take the pills', channel: 'kitchen' })).toMatchObject({ ok: true, channel: 'kitchen' });
  });
});

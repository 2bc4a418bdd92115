// Attack (reading other clients' answers on a shared reply topic): a caller login may subscribe only to
// exact `call_result/<request_id>` topics, but request ids are the caller's choice and often guessable
// (the Home Assistant example uses a timestamp). A second caller login, bound to another user, subscribed
// to the guessed id (and to `call_result/_invalid`) and received the first caller's results. Likewise
// every plugin login reads `registered/_invalid`, and saw the refusals of other plugins' registrations
// (their client ids and errors). Defence: on the embedded broker an answer on such a topic is delivered
// only to the login that sent the request (anonymous loopback clients and admins, who may read
// everything anyway, still see it).
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ChildClient, type ChildClientOptions } from '../fixtures/bus/child-client.js';
import { ensureBuilt, makePluginsDir } from '../e2e/helpers.js';
import { settle } from './identity-helpers.js';

let core: TestCore;
let pluginsDir: string;
const clients: ChildClient[] = [];

async function login(
  name: string,
  role: 'caller' | 'plugin',
  binding: { users?: string[]; plugin_ids?: string[] },
): Promise<{ username: string; password: string }> {
  const res = await core.api<{ password: string }>('POST', '/api/credentials', { name, role, ...binding });
  expect(res.status).toBe(201);
  return { username: name, password: res.body.password };
}

async function connected(options: Omit<ChildClientOptions, 'url'>, filters: string[]): Promise<ChildClient> {
  const client = new ChildClient({ url: core.mqttUrl, ...options });
  clients.push(client);
  await client.connected();
  for (const filter of filters) expect(await client.subscribe(filter)).toEqual([1]);
  return client;
}

beforeAll(async () => {
  await ensureBuilt();
  pluginsDir = makePluginsDir({ shipped: [{ id: 'time' }] });
  core = await startTestCore({ pluginsDir });
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.crash().catch(() => undefined);
  await core?.cleanup();
  rmSync(pluginsDir, { recursive: true, force: true });
});

describe('answers on shared reply topics', () => {
  it("a call's result reaches only the login that made the call, not a caller subscribed to the same request id", async () => {
    const watched = [topics.callResult('night-1'), topics.callResultInvalid()];
    const nodered = await connected({ clientId: 'nodered', ...(await login('nodered', 'caller', { users: ['alice'] })) }, watched);
    const snoop = await connected({ clientId: 'snoop', ...(await login('snoop', 'caller', { users: ['bob'] })) }, watched);
    const monitor = await connected({ clientId: 'monitor' }, ['homeclaw/call_result/#']);

    await nodered.publish(topics.call('time', 'now'), JSON.stringify({ request_id: 'night-1', user_id: 'alice', parameters: { timezone: 'UTC' } }));
    const answer = await nodered.message(topics.callResult('night-1'));
    expect(JSON.parse(answer.payload ?? '{}')).toMatchObject({ request_id: 'night-1', success: true });
    await nodered.publish(topics.call('time', 'now'), 'not json');
    const refusal = await nodered.message(topics.callResultInvalid());
    expect(JSON.parse(refusal.payload ?? '{}')).toMatchObject({ success: false, topic: topics.call('time', 'now') });

    await monitor.message(topics.callResultInvalid());
    await settle(300);
    expect(snoop.messages(topics.callResult('night-1'))).toEqual([]);
    expect(snoop.messages(topics.callResultInvalid())).toEqual([]);
    // An anonymous client on a loopback-only broker may do anything, reading included.
    expect(monitor.messages(topics.callResult('night-1'))).toHaveLength(1);
  });

  it("a registration's refusal on registered/_invalid reaches only the plugin login that sent it", async () => {
    const intruder = await connected({ clientId: 'intruder-1', ...(await login('intruder', 'plugin', { plugin_ids: ['intruder'] })) }, [
      topics.registeredInvalid(),
    ]);
    const bystander = await connected({ clientId: 'bystander-1', ...(await login('bystander', 'plugin', { plugin_ids: ['bystander'] })) }, [
      topics.registeredInvalid(),
    ]);
    const descriptor = { id: 'lights', name: 'Lights', description: 'Not mine.', capabilities: [{ id: 'on', description: 'On.' }], epoch: Date.now() };
    await intruder.publish(topics.register(), JSON.stringify(descriptor));
    const nack = JSON.parse((await intruder.message(topics.registeredInvalid())).payload ?? '{}') as Record<string, unknown>;
    expect(nack).toMatchObject({ ok: false, client_id: 'intruder-1' });
    await settle(300);
    expect(bystander.messages(topics.registeredInvalid())).toEqual([]);
  });
});

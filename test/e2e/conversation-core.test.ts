// The conversation end to end on the REAL Core without an LLM: the shipped built-ins (time, notes, weather, buy)
// loaded from plugins/, BM25 retrieval, the real resolver, dispatcher and buy plugin, spoken to over the
// MQTT channel topics and POST /api/messages.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOrders } from '../../plugins/buy/index.js';
import { topics } from '../../src/protocol/topics.js';
import type { ChannelMessageOut } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { channelUser, ensureBuilt, SHIPPED_PLUGINS_DIR } from './helpers.js';

let core: TestCore;
let client: TestClient;
const CHANNEL = 'e2e';

beforeAll(async () => {
  await ensureBuilt();
  core = await startTestCore({ pluginsDir: SHIPPED_PLUGINS_DIR });
  client = await connectTestClient(core.mqttUrl);
  await client.subscribe(topics.channelOut(CHANNEL));
}, 120_000);

afterAll(async () => {
  await client?.end(true);
  await core?.cleanup();
});

const ordersDir = (): string => join(core.dataDir, 'plugins', 'buy');
const ordersOf = (user: string) => listOrders(ordersDir()).filter((o) => o.user_id === user);

async function setProfile(user: string, values: Record<string, string>): Promise<void> {
  const res = await core.api('POST', `/api/profiles/${user}`, { set: values });
  expect(res.status).toBe(200);
}

describe('real Core, no LLM', () => {
  it('loads the shipped built-ins', () => {
    const ids = core.ctx.registry
      .list()
      .map((r) => r.descriptor.id)
      .sort();
    expect(ids).toEqual(['buy', 'notes', 'reminders', 'time', 'weather']);
    expect(core.ctx.registry.list().every((r) => r.state === 'online')).toBe(true);
  });

  it('"what time is it?" is answered by the time plugin in the request\'s timezone', async () => {
    const reply = await channelUser(client, CHANNEL, 'tina').say('what time is it?', { timezone: 'Asia/Tokyo' });
    expect(reply).toMatchObject({ kind: 'answer', plugin_id: 'time', capability_id: 'now', user_id: 'tina' });
    expect(reply.text).toMatch(/^It is \w+day, \d+ \w+ \d{4}, \d\d:\d\d in Asia\/Tokyo \(UTC\+09:00\)\.$/);
  });

  it('a slash command calls the capability with the given parameters', async () => {
    const reply = await channelUser(client, CHANNEL, 'sam').say('/time now timezone=Europe/Paris');
    expect(reply).toMatchObject({ kind: 'answer', plugin_id: 'time' });
    expect(reply.text).toMatch(/in Europe\/Paris \(UTC\+0[12]:00\)/);
    const bad = await channelUser(client, CHANNEL, 'sam').say('/time now timezone=Mars/Olympus');
    expect(bad.kind).toBe('error');
    expect(bad.text).toContain('unknown time zone "Mars/Olympus"');
  });

  it('buy milk: profile values shown for confirmation, "yes" places the order with them', async () => {
    await setProfile('bob', { name: 'Bob', address: '123 Main St', phone: '555-0000' });
    const user = channelUser(client, CHANNEL, 'bob');
    const question = await user.say('buy me some milk');
    expect(question).toMatchObject({ kind: 'question', plugin_id: 'buy', capability_id: 'place_order' });
    expect(question.text).toContain('"123 Main St"');
    expect(question.text).toContain('"555-0000"');
    expect(question.text).toContain('Is that correct?');
    expect(ordersOf('bob')).toHaveLength(0);

    const done = await user.say('yes');
    expect(done).toMatchObject({ kind: 'answer', plugin_id: 'buy' });
    expect(done.text).toMatch(/^Order placed for milk: delivery to 123 Main St for Bob \(phone 555-0000\)\. Order id [0-9a-f-]{36}\.$/);
    const orders = ordersOf('bob');
    expect(orders).toHaveLength(1);
    expect(orders[0]).toMatchObject({ item: 'milk', address: '123 Main St', phone: '555-0000', contact_name: 'Bob', channel: CHANNEL });
    // The dialogue is over: another "yes" is not a second order.
    await user.say('yes');
    expect(ordersOf('bob')).toHaveLength(1);
  });

  it('buy milk: corrections replace the profile values; an ambiguous one is asked about, never dropped', async () => {
    await setProfile('carol', { name: 'Carol', address: '123 Old St', phone: '555-1111' });
    const user = channelUser(client, CHANNEL, 'carol');
    expect((await user.say('buy me some milk')).kind).toBe('question');
    // Address and phone both await confirmation: one value could be either, so the Core asks.
    const which = await user.say('actually use 456 Oak Ave');
    expect(which).toMatchObject({ kind: 'question', plugin_id: 'buy' });
    expect(which.text).toContain('which value to change');
    expect(ordersOf('carol')).toHaveLength(0);
    // A correction: "Actually use 456 Oak Ave, 555-1234" corrects both, in the order shown.
    const done = await user.say('actually use 456 Oak Ave, 555-1234');
    expect(done).toMatchObject({ kind: 'answer', plugin_id: 'buy' });
    expect(ordersOf('carol')).toHaveLength(1);
    expect(ordersOf('carol')[0]).toMatchObject({ item: 'milk', address: '456 Oak Ave', phone: '555-1234', contact_name: 'Carol' });
  });

  it('buy milk: a keyed correction of one value leaves the other to confirm', async () => {
    await setProfile('cleo', { name: 'Cleo', address: '123 Old St', phone: '555-1112' });
    const user = channelUser(client, CHANNEL, 'cleo');
    expect((await user.say('buy me some butter')).kind).toBe('question');
    const next = await user.say('address="456 Oak Ave"');
    expect(next.kind).toBe('question');
    expect(next.text).toContain('"555-1112"');
    expect(next.text).not.toContain('123 Old St');
    expect(ordersOf('cleo')).toHaveLength(0);
    expect((await user.say('yes')).kind).toBe('answer');
    expect(ordersOf('cleo')[0]).toMatchObject({ item: 'butter', address: '456 Oak Ave', phone: '555-1112' });
  });

  it('buy milk: "cancel" clears the pending call; nothing is ordered and a later "yes" does nothing', async () => {
    await setProfile('dan', { name: 'Dan', address: '1 Elm St', phone: '555-2222' });
    const user = channelUser(client, CHANNEL, 'dan');
    expect((await user.say('buy me some bread')).kind).toBe('question');
    expect(await user.say('cancel')).toMatchObject({ kind: 'answer', text: 'Cancelled.' });
    const after = await user.say('yes');
    expect(after.plugin_id).not.toBe('buy');
    expect(ordersOf('dan')).toHaveLength(0);
  });

  it('buy milk with no profile: one question lists everything missing, one answer places the order', async () => {
    const user = channelUser(client, CHANNEL, 'erin');
    const question = await user.say('buy me some milk');
    expect(question.kind).toBe('question');
    for (const name of ['address', 'phone', 'contact_name']) expect(question.text).toContain(name);
    expect(question.text).not.toMatch(/\bitem\b/);
    const done = await user.say('address="9 Pine Rd" phone=555-0199 contact_name=Erin');
    expect(done).toMatchObject({ kind: 'answer', plugin_id: 'buy' });
    expect(ordersOf('erin')[0]).toMatchObject({ item: 'milk', address: '9 Pine Rd', phone: '555-0199', contact_name: 'Erin' });
  });

  it('a message no plugin matches lists the closest plugins and how to call them', async () => {
    const reply = await channelUser(client, CHANNEL, 'fay').say('good night');
    expect(reply.kind).toBe('answer');
    expect(reply.plugin_id).toBeUndefined();
    expect(reply.text).toContain('No language model is configured');
  });

  it('POST /api/messages answers with the same reply shape, sessions included', async () => {
    await setProfile('gus', { name: 'Gus', address: '7 Bay Rd', phone: '555-3333' });
    const first = await core.api<ChannelMessageOut>('POST', '/api/messages', { channel: 'web', user_id: 'gus', session_id: 's1', text: 'buy me some coffee' });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ kind: 'question', user_id: 'gus', session_id: 's1', plugin_id: 'buy' });
    // Another session of the same user has no pending call.
    const other = await core.api<ChannelMessageOut>('POST', '/api/messages', { channel: 'web', user_id: 'gus', session_id: 's2', text: 'yes' });
    expect(other.body.plugin_id).toBeUndefined();
    expect(ordersOf('gus')).toHaveLength(0);
    const done = await core.api<ChannelMessageOut>('POST', '/api/messages', { channel: 'web', user_id: 'gus', session_id: 's1', text: 'yes' });
    expect(done.body).toMatchObject({ kind: 'answer', plugin_id: 'buy' });
    expect(ordersOf('gus')[0]).toMatchObject({ item: 'coffee', channel: 'web', address: '7 Bay Rd' });
  });
});

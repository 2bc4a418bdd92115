// Attack: a client logged in with a `channel` credential published {"user_id":"alice", ...} on its own
// channels/<ch>/in, saw Alice's address and phone in the confirmation, and "yes" placed an order for her.
// Defence: a channel speaks only for the users bound to its credential; any other user gets a clear
// error on the channel's out topic and nothing else happens (no engine call, no profile read, no
// pending call). Anonymous loopback mode stays open and /api/status says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { ChannelMessageOut } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient } from '../helpers/mqtt-client.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { channelUser, ensureBuilt, makePluginsDir } from '../e2e/helpers.js';

let core: TestCore;
const clients: ChildClient[] = [];
const profileReads: string[] = [];

async function credential(name: string, role: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await core.api<{ password: string }>('POST', '/api/credentials', { name, role, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.password;
}

async function login(username: string, password: string, channel: string): Promise<ChildClient> {
  const client = new ChildClient({ url: core.mqttUrl, username, password });
  clients.push(client);
  await client.connected();
  expect(await client.subscribe(topics.channelOut(channel))).toEqual([1]);
  return client;
}

async function say(client: ChildClient, channel: string, message: Record<string, unknown>): Promise<ChannelMessageOut> {
  const request_id = `r-${Math.random().toString(16).slice(2)}`;
  await client.publish(topics.channelIn(channel), JSON.stringify({ request_id, ...message }));
  const event = await client.waitFor(
    (e) => e.event === 'message' && e.topic === topics.channelOut(channel) && JSON.parse(e.payload ?? '{}').request_id === request_id,
  );
  return JSON.parse(event.payload ?? '{}') as ChannelMessageOut;
}

beforeAll(async () => {
  await ensureBuilt();
  // Credentials required: the LAN situation, without opening a listener beyond loopback in a test.
  core = await startTestCore({ pluginsDir: makePluginsDir({ shipped: [{ id: 'buy' }] }), overrides: { broker: { allow_anonymous: false } } });
  await core.api('POST', '/api/profiles/alice', { set: { name: 'Alice', address: '12 Oak St', phone: '555-0100' } });
  await core.api('POST', '/api/profiles/telegram', { set: { name: 'Tg', address: '1 Bot Way', phone: '555-0001' } });
  const profiles = core.ctx.profiles;
  const read = profiles.get.bind(profiles);
  profiles.get = (user: string) => {
    profileReads.push(user);
    return read(user);
  };
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.end();
  await core?.cleanup();
});

describe('a channel credential speaks only for its users', () => {
  it('refuses a message for a user the credential is not bound to, with a clear error, and changes nothing', async () => {
    const password = await credential('telegram', 'channel');
    const attacker = await login('telegram', password, 'telegram');
    const invokedBefore = core.ctx.dispatcher.getStats().invoked;
    profileReads.length = 0;

    const reply = await say(attacker, 'telegram', { user_id: 'alice', text: '/buy place_order item=milk' });
    expect(reply.kind).toBe('error');
    expect(reply.user_id).toBe('alice');
    expect(reply.text).toContain('"telegram"');
    expect(reply.text).toContain('"alice"');
    expect(reply.text).not.toContain('12 Oak St');
    expect(reply.text).not.toContain('555-0100');

    const yes = await say(attacker, 'telegram', { user_id: 'alice', text: 'yes' });
    expect(yes.kind).toBe('error');
    expect(profileReads).toEqual([]);
    expect(core.ctx.dispatcher.getStats().invoked).toBe(invokedBefore);
    expect(core.ctx.pendingCalls.get({ channel: 'telegram', user_id: 'alice', session_id: 'default' })).toBeUndefined();
  });

  it('by default the credential speaks as the user named like itself', async () => {
    const client = await login('telegram', (await core.api<{ password: string }>('POST', '/api/credentials/telegram/rotate')).body.password, 'telegram');
    const reply = await say(client, 'telegram', { user_id: 'telegram', text: '/buy place_order item=milk' });
    expect(reply.kind).toBe('question');
    expect(reply.text).toContain('1 Bot Way');
  });

  it('--users alice,bob: the credential may speak as alice and bob, not as mallory', async () => {
    const password = await credential('kitchen', 'channel', { users: ['alice', 'bob'] });
    const listed = await core.api<{ credentials: { name: string; users?: string[] }[] }>('GET', '/api/credentials');
    expect(listed.body.credentials.find((c) => c.name === 'kitchen')?.users).toEqual(['alice', 'bob']);
    const kitchen = await login('kitchen', password, 'kitchen');
    const asAlice = await say(kitchen, 'kitchen', { user_id: 'alice', text: '/buy place_order item=milk' });
    expect(asAlice.kind).toBe('question');
    expect(asAlice.text).toContain('12 Oak St');
    profileReads.length = 0;
    const asMallory = await say(kitchen, 'kitchen', { user_id: 'mallory', text: '/buy place_order item=milk' });
    expect(asMallory).toMatchObject({ kind: 'error', user_id: 'mallory' });
    expect(asMallory.text).toMatch(/may speak only as "alice", "bob"/);
    expect(profileReads).toEqual([]);
  });

  it('refuses bad --users values with a clear error and creates nothing', async () => {
    const bad = await core.api<{ message: string }>('POST', '/api/credentials', { name: 'hall', role: 'channel', users: ['ok', 'not valid!'] });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('not valid!');
    const plugin = await core.api<{ message: string }>('POST', '/api/credentials', { name: 'lamp', role: 'plugin', users: ['alice'] });
    expect(plugin.status).toBe(400);
    expect(plugin.body.message).toMatch(/users.*channel/);
    const names = (await core.api<{ credentials: { name: string }[] }>('GET', '/api/credentials')).body.credentials.map((c) => c.name);
    expect(names).not.toContain('hall');
    expect(names).not.toContain('lamp');
  });

  it('an admin credential may speak as anyone', async () => {
    const password = await credential('root', 'admin');
    const admin = await login('root', password, 'kitchen');
    const reply = await say(admin, 'kitchen', { user_id: 'alice', text: '/buy place_order item=milk' });
    expect(reply.kind).toBe('question');
  });

  it('/api/status says the Core requires credentials', async () => {
    const status = await core.api<{ access: { mode: string; anonymous_mqtt: boolean } }>('GET', '/api/status');
    expect(status.body.access).toMatchObject({ mode: 'credentials', anonymous_mqtt: false });
  });
});

describe('anonymous loopback mode', () => {
  it('stays open for development, and /api/status says so plainly', async () => {
    const open = await startTestCore({ pluginsDir: makePluginsDir({ shipped: [{ id: 'buy' }] }) });
    try {
      await open.api('POST', '/api/profiles/alice', { set: { name: 'Alice', address: '12 Oak St', phone: '555-0100' } });
      const client = await connectTestClient(open.mqttUrl);
      await client.subscribe(topics.channelOut('dev'));
      const reply = await channelUser(client, 'dev', 'alice').say('/buy place_order item=milk');
      expect(reply.kind).toBe('question');
      await client.end(true);
      const status = await open.api<{ access: { mode: string; anonymous_mqtt: boolean; note: string } }>('GET', '/api/status');
      expect(status.body.access).toMatchObject({ mode: 'anonymous-loopback', anonymous_mqtt: true });
      expect(status.body.access.note).toMatch(/any user/i);
    } finally {
      await open.cleanup();
    }
  });
});

// With an external broker the Core cannot see who published a channel message. What it can enforce:
// the broker ACL (docs/external-broker-acl.md) lets only the login named like the channel publish on
// channels/<channel>/in, and the Core binds each channel to users: `access.channels.<ch>.users` in the
// config, the users of a channel credential of that name, else the user named like the channel.
// Attack: the kitchen tablet's login (real Mosquitto, separate process) speaks as mallory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { startCore, type RunningCore } from '../../src/main.js';
import { topics } from '../../src/protocol/topics.js';
import type { ChannelMessageOut } from '../../src/protocol/types.js';
import { testConfig } from '../helpers/core.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { ensureBuilt, makePluginsDir } from '../e2e/helpers.js';
import { aclFromDocs } from '../helpers/external-broker-docs.js';

let mosquitto: MosquittoHandle;
let core: RunningCore;
let dataDir: string;
const clients: ChildClient[] = [];

async function login(username: string, channel: string): Promise<ChildClient> {
  const client = new ChildClient({ url: mosquitto.url, username, password: `${username}-secret`, clientId: `${username}-tablet` });
  clients.push(client);
  await client.connected();
  await client.subscribe(topics.channelOut(channel));
  return client;
}

async function say(client: ChildClient, channel: string, userId: string, text: string): Promise<ChannelMessageOut> {
  const request_id = `r-${Math.random().toString(16).slice(2)}`;
  await client.publish(topics.channelIn(channel), JSON.stringify({ request_id, user_id: userId, text }));
  const event = await client.waitFor((e) => e.event === 'message' && JSON.parse(e.payload ?? '{}').request_id === request_id, 10_000);
  return JSON.parse(event.payload ?? '{}') as ChannelMessageOut;
}

beforeAll(async () => {
  await ensureBuilt();
  mosquitto = await startMosquitto({
    users: { 'homeclaw-core': 'homeclaw-core-secret', kitchen: 'kitchen-secret', telegram: 'telegram-secret' },
    acl: aclFromDocs(),
  });
  dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-ext-binding-'));
  const config = testConfig(dataDir, {
    pluginsDir: makePluginsDir({ shipped: [{ id: 'buy' }] }),
    overrides: {
      broker: { url: mosquitto.url, username: 'homeclaw-core', password: 'homeclaw-core-secret' },
      access: { channels: { kitchen: { users: ['alice', 'bob'] } } },
    },
  });
  core = await startCore({ config, log: silentLogger() });
  core.ctx.profiles.set('alice', { name: 'Alice', address: '12 Oak St', phone: '555-0100' });
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.end();
  await core?.stop();
  await mosquitto?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('channel bindings with an external broker', () => {
  it('a channel bound in the config speaks only for its users', async () => {
    const kitchen = await login('kitchen', 'kitchen');
    const invoked = core.ctx.dispatcher.getStats().invoked;
    const asMallory = await say(kitchen, 'kitchen', 'mallory', '/buy place_order item=milk');
    expect(asMallory).toMatchObject({ kind: 'error', user_id: 'mallory' });
    expect(asMallory.text).toMatch(/channel "kitchen" may speak only as "alice", "bob"/);
    expect(core.ctx.pendingCalls.get({ channel: 'kitchen', user_id: 'mallory', session_id: 'default' })).toBeUndefined();
    expect(core.ctx.dispatcher.getStats().invoked).toBe(invoked);

    const asAlice = await say(kitchen, 'kitchen', 'alice', '/buy place_order item=milk');
    expect(asAlice.kind).toBe('question');
    expect(asAlice.text).toContain('12 Oak St');
  });

  it('an unbound channel speaks only as the user named like it', async () => {
    const telegram = await login('telegram', 'telegram');
    const asAlice = await say(telegram, 'telegram', 'alice', '/buy place_order item=milk');
    expect(asAlice.kind).toBe('error');
    expect(asAlice.text).toMatch(/channel "telegram" may speak only as "telegram"/);
    const asItself = await say(telegram, 'telegram', 'telegram', '/buy place_order item=milk');
    expect(asItself.kind).toBe('question');
  });

  it('a channel credential created with --users binds the channel of that name', async () => {
    await core.ctx.credentials.add('telegram', 'channel', { users: ['alice'] });
    const telegram = await login('telegram', 'telegram');
    const asAlice = await say(telegram, 'telegram', 'alice', '/buy place_order item=milk');
    expect(asAlice.kind).toBe('question');
  });

  it('/api/status says the broker is external and what that means', async () => {
    const res = await fetch(`${core.httpUrl}/api/status`, { headers: { authorization: `Bearer ${core.adminToken}` } });
    const status = (await res.json()) as { access: { mode: string; note: string } };
    expect(status.access.mode).toBe('external-broker');
    expect(status.access.note).toMatch(/broker ACL/);
  });
});

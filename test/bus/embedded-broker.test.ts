// The embedded broker with real MQTT clients in separate processes.
import Database from 'better-sqlite3';
import { connect as netConnect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmbeddedBroker, type EmbeddedBrokerHandle } from '../../src/bus/broker.js';
import type { IncomingMessage } from '../../src/bus/core-bus.js';
import { CredentialStore } from '../../src/bus/credentials.js';
import { EmbeddedBus } from '../../src/bus/embedded-bus.js';
import { silentLogger } from '../../src/log.js';
import { topics } from '../../src/protocol/topics.js';
import { ChildClient } from '../fixtures/bus/child-client.js';

const log = silentLogger();

function collect(bus: EmbeddedBus, filter: string): Promise<IncomingMessage[]> {
  const received: IncomingMessage[] = [];
  return bus.subscribe(filter, (message) => received.push(message)).then(() => received);
}

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function portRefuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('embedded broker', () => {
  let db: Database.Database;
  let credentials: CredentialStore;
  let broker: EmbeddedBrokerHandle | undefined;
  let bus: EmbeddedBus | undefined;
  const clients: ChildClient[] = [];
  const pending = new Map<string, string>();

  const client = (options: Omit<ConstructorParameters<typeof ChildClient>[0], 'url'> & { url?: string } = {}): ChildClient => {
    const child = new ChildClient({ url: `mqtt://127.0.0.1:${broker!.tcpPort}`, ...options });
    clients.push(child);
    return child;
  };

  const start = async (overrides: Partial<Parameters<typeof startEmbeddedBroker>[0]> = {}): Promise<void> => {
    broker = await startEmbeddedBroker({
      port: 0,
      allowAnonymous: 'auto',
      maxPayloadBytes: 1_000,
      credentials,
      acl: { requestTarget: (id) => pending.get(id) },
      log,
      ...overrides,
    });
    bus = new EmbeddedBus({ broker, log });
  };

  beforeEach(() => {
    db = new Database(':memory:');
    credentials = new CredentialStore(db);
    pending.clear();
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((child) => child.crash()));
    await bus?.close();
    await broker?.close();
    bus = undefined;
    broker = undefined;
    db.close();
  });

  it('round-trips between a client process and the Core, with the publisher identity', async () => {
    await start();
    const inbox = await collect(bus!, topics.channelIn('+'));
    const child = client({ clientId: 'kitchen-panel' });
    await child.connected();
    expect(await child.subscribe(topics.channelOut('kitchen'))).toEqual([1]);

    await child.publish(topics.channelIn('kitchen'), JSON.stringify({ text: 'hello' }));
    await until(() => inbox.length === 1);
    expect(inbox[0]).toMatchObject({ topic: topics.channelIn('kitchen'), retain: false });
    expect(JSON.parse(inbox[0]!.payload.toString())).toEqual({ text: 'hello' });
    expect(inbox[0]!.publisher).toMatchObject({ clientId: 'kitchen-panel', username: undefined, role: undefined });

    await bus!.publish(topics.channelOut('kitchen'), JSON.stringify({ text: 'hi back' }));
    const reply = await child.message(topics.channelOut('kitchen'));
    expect(JSON.parse(reply.payload!)).toEqual({ text: 'hi back' });
  });

  it("delivers the Core's own publishes to its handlers without a publisher", async () => {
    await start();
    const seen = await collect(bus!, topics.coreStatus());
    await bus!.publish(topics.coreStatus(), JSON.stringify({ online: true, ts: 1 }), { retain: true });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.publisher).toBeUndefined();
    // retained for clients that subscribe later
    const late = client();
    await late.connected();
    await late.subscribe(topics.coreStatus());
    const retained = await late.message(topics.coreStatus());
    expect(retained.retain).toBe(true);
    expect(JSON.parse(retained.payload!)).toEqual({ online: true, ts: 1 });
  });

  it('isolates a throwing handler and stops delivering after unsubscribe', async () => {
    await start();
    const good: IncomingMessage[] = [];
    await bus!.subscribe(topics.heartbeat('+'), () => {
      throw new Error('boom');
    });
    await bus!.subscribe(topics.heartbeat('+'), async () => {
      throw new Error('async boom');
    });
    const unsubscribe = await bus!.subscribe(topics.heartbeat('+'), (message) => good.push(message));
    await bus!.publish(topics.heartbeat('weather'), '{}');
    expect(good).toHaveLength(1);
    await unsubscribe();
    await bus!.publish(topics.heartbeat('weather'), '{}');
    expect(good).toHaveLength(1);
  });

  it('authenticates with credentials, applies the plugin ACL and keeps the client connected after a denial', async () => {
    await start();
    const { password } = await credentials.add('weather', 'plugin');
    const heartbeats = await collect(bus!, topics.heartbeat('+'));
    const results = await collect(bus!, topics.result('+'));
    const observer = client({ clientId: 'observer' });
    await observer.connected();
    await observer.subscribe(topics.heartbeat('+'));

    const plugin = client({ clientId: 'weather-1', username: 'weather', password });
    await plugin.connected();
    // subscriptions: own invoke granted, someone else's refused with 0x80
    expect(await plugin.subscribe(topics.invoke('weather'))).toEqual([1]);
    expect(await plugin.subscribe(topics.invoke('lights'))).toEqual([128]);
    expect(await plugin.subscribe(topics.heartbeat('+'))).toEqual([128]);

    // publishing another plugin's heartbeat is acknowledged (MQTT 3.1.1) but delivered to nobody
    await plugin.publish(topics.heartbeat('lights'), JSON.stringify({ forged: true }));
    await plugin.publish(topics.heartbeat('weather'), JSON.stringify({ seq: 1 }));
    await until(() => heartbeats.length === 1);
    await observer.message(topics.heartbeat('weather'));
    expect(heartbeats.map((m) => m.topic)).toEqual([topics.heartbeat('weather')]);
    expect(heartbeats[0]!.publisher).toEqual({
      clientId: 'weather-1',
      username: 'weather',
      role: 'plugin',
      pluginIds: ['weather'],
      channels: undefined,
    });
    expect(observer.messages(topics.heartbeat('lights'))).toEqual([]);

    // results: only for requests sent to this plugin
    pending.set('r-mine', 'weather');
    pending.set('r-theirs', 'lights');
    await plugin.publish(topics.result('r-theirs'), JSON.stringify({ forged: true }));
    await plugin.publish(topics.result('r-late'), JSON.stringify({ late: true }));
    await plugin.publish(topics.result('r-mine'), JSON.stringify({ ok: true }));
    await until(() => results.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(results.map((m) => m.topic)).toEqual([topics.result('r-mine')]);
    expect(plugin.events.some((e) => e.event === 'close')).toBe(false);
  });

  it('refuses bad passwords and a client id held by another user', async () => {
    await start();
    const { password } = await credentials.add('weather', 'plugin');
    const bad = client({ username: 'weather', password: `${password}!` });
    await expect(bad.connected()).rejects.toThrow(/Bad username or password|code.?4|"code":4/i);

    const owner = client({ clientId: 'shared-id', username: 'weather', password });
    await owner.connected();
    const thief = client({ clientId: 'shared-id' });
    await expect(thief.connected()).rejects.toThrow(/Identifier rejected|"code":2/i);
    // the rightful owner is still connected
    expect(owner.events.some((e) => e.event === 'close')).toBe(false);
  });

  it('lets channels use only their own topics', async () => {
    await start();
    const { password } = await credentials.add('telegram', 'channel');
    const inbox = await collect(bus!, topics.channelIn('+'));
    const channel = client({ username: 'telegram', password });
    await channel.connected();
    expect(await channel.subscribe(topics.channelOut('telegram'))).toEqual([1]);
    expect(await channel.subscribe(topics.channelOut('web'))).toEqual([128]);
    await channel.publish(topics.channelIn('web'), '{"forged":true}');
    await channel.publish(topics.register(), '{}');
    await channel.publish(topics.channelIn('telegram'), '{"text":"hi"}');
    await until(() => inbox.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(inbox.map((m) => m.topic)).toEqual([topics.channelIn('telegram')]);
    expect(inbox[0]!.publisher?.channels).toEqual(['telegram']);
  });

  it('does not let anonymous clients impersonate the Core status', async () => {
    await start();
    const seen = await collect(bus!, topics.coreStatus());
    const anonymous = client();
    await anonymous.connected();
    await anonymous.publish(topics.coreStatus(), JSON.stringify({ online: false, ts: 0 }), { retain: true });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(seen).toEqual([]);
    const later = client();
    await later.connected();
    await later.subscribe(topics.coreStatus());
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(later.messages(topics.coreStatus())).toEqual([]);
  });

  it('delivers a message meant for one login to that login and to clients who may read anything, only', async () => {
    await start();
    const nodered = await credentials.add('nodered', 'caller');
    const snoop = await credentials.add('snoop', 'caller');
    const admin = await credentials.add('ops', 'admin');
    const topic = topics.callResult('r-1');
    const readers = {
      asker: client({ clientId: 'nodered-1', username: 'nodered', password: nodered.password }),
      askerElsewhere: client({ clientId: 'nodered-2', username: 'nodered', password: nodered.password }),
      snoop: client({ clientId: 'snoop-1', username: 'snoop', password: snoop.password }),
      admin: client({ clientId: 'ops-1', username: 'ops', password: admin.password }),
      anonymous: client({ clientId: 'anon-1' }),
    };
    for (const reader of Object.values(readers)) {
      await reader.connected();
      expect(await reader.subscribe(topic)).toEqual([1]);
    }
    await bus!.publish(topic, '{"for":"nodered"}', { onlyTo: { clientId: 'nodered-1', username: 'nodered' } });
    await bus!.publish(topic, '{"for":"everyone"}');
    for (const reader of Object.values(readers)) await reader.waitFor((e) => e.event === 'message' && e.payload === '{"for":"everyone"}');
    const got = Object.fromEntries(Object.entries(readers).map(([name, reader]) => [name, reader.messages(topic).map((m) => m.payload)]));
    expect(got).toEqual({
      asker: ['{"for":"nodered"}', '{"for":"everyone"}'],
      askerElsewhere: ['{"for":"nodered"}', '{"for":"everyone"}'],
      snoop: ['{"for":"everyone"}'],
      admin: ['{"for":"nodered"}', '{"for":"everyone"}'],
      anonymous: ['{"for":"nodered"}', '{"for":"everyone"}'],
    });
  });

  it('drops publishes above the hard payload cap and keeps the client', async () => {
    await start({ maxPayloadBytes: 100 });
    const inbox = await collect(bus!, topics.channelIn('+'));
    const child = client();
    await child.connected();
    await child.publish(topics.channelIn('big'), '', { payloadBytes: 401 });
    await child.publish(topics.channelIn('fits'), '', { payloadBytes: 400 });
    await until(() => inbox.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(inbox.map((m) => [m.topic, m.payload.length])).toEqual([[topics.channelIn('fits'), 400]]);
    expect(child.events.some((e) => e.event === 'close')).toBe(false);
  });

  it('delivers a plugin will with its identity and reports the disconnect', async () => {
    await start();
    const { password } = await credentials.add('weather', 'plugin');
    const statuses = await collect(bus!, topics.status('+'));
    const disconnected: string[] = [];
    bus!.onClientDisconnect((clientId) => disconnected.push(clientId));
    const plugin = client({
      clientId: 'weather-will',
      username: 'weather',
      password,
      will: { topic: topics.status('weather'), payload: JSON.stringify({ state: 'offline', epoch: 7 }), qos: 1, retain: true },
    });
    await plugin.connected();
    await plugin.crash();
    await until(() => statuses.length === 1 && disconnected.length === 1);
    expect(JSON.parse(statuses[0]!.payload.toString())).toEqual({ state: 'offline', epoch: 7 });
    expect(statuses[0]!.publisher).toMatchObject({ clientId: 'weather-will', username: 'weather', role: 'plugin' });
    expect(disconnected).toEqual(['weather-will']);
  });

  it('refuses anonymous clients when a listener is not on loopback (auto)', async () => {
    await start({ host: '0.0.0.0' });
    expect(broker!.anonymousAllowed).toBe(false);
    const { password } = await credentials.add('admin1', 'admin');
    const anonymous = client();
    await expect(anonymous.connected()).rejects.toThrow(/Not authorized|"code":5/i);
    const admin = client({ username: 'admin1', password });
    await admin.connected();
    expect(await admin.subscribe('#')).toEqual([1]);
  });

  it('serves MQTT over WebSocket', async () => {
    await start({ wsPort: 0 });
    expect(broker!.wsPort).toBeGreaterThan(0);
    const inbox = await collect(bus!, topics.channelIn('+'));
    const child = client({ url: `ws://127.0.0.1:${broker!.wsPort}`, clientId: 'browser' });
    await child.connected();
    await child.subscribe(topics.channelOut('web'));
    await child.publish(topics.channelIn('web'), '{"text":"over ws"}');
    await until(() => inbox.length === 1);
    expect(inbox[0]!.publisher?.clientId).toBe('browser');
    await bus!.publish(topics.channelOut('web'), '{"text":"back over ws"}');
    expect(JSON.parse((await child.message(topics.channelOut('web'))).payload!)).toEqual({ text: 'back over ws' });
  });

  it('keeps QoS 1 round trips fast (TCP_NODELAY on accepted sockets)', async () => {
    await start({ noDelay: process.env.HOMECLAW_TEST_NAGLE !== '1' });
    const requestTopic = topics.invoke('echo');
    const replyTopic = topics.result('echo-reply');
    await bus!.subscribe(requestTopic, (message) => {
      void bus!.publish(replyTopic, message.payload);
    });
    const child = client();
    await child.connected();
    child.send({ op: 'rtt', id: 'rtt', reqTopic: requestTopic, resTopic: replyTopic, count: 25 });
    const event = await child.waitFor((e) => e.id === 'rtt', 20_000);
    const samples = [...(event.samples ?? [])].slice(5).sort((a, b) => a - b);
    expect(samples).toHaveLength(20);
    const median = samples[10]!;
    expect(median).toBeLessThan(20);
  });

  it('closes gracefully: clients are disconnected and the ports refuse connections', async () => {
    await start({ wsPort: 0 });
    const child = client();
    await child.connected();
    const { tcpPort, wsPort } = broker!;
    await bus!.close();
    await broker!.close();
    await child.waitFor((e) => e.event === 'close');
    expect(await portRefuses(tcpPort)).toBe(true);
    expect(await portRefuses(wsPort!)).toBe(true);
    await broker!.close(); // idempotent
    await expect(bus!.publish(topics.coreStatus(), '{}')).rejects.toThrow(/closed/);
  });
});

// The external bus over MQTT 5: properties out and in, what the broker answers (PUBACK, SUBACK and
// DISCONNECT reason codes, the maximum packet size it announces), and the fallback to 3.1.1 against a
// broker that refuses 5. Real Mosquitto and mqtt.js clients in other processes; a bare Aedes (MQTT 3.1.1
// only) as the refusing broker; a stand-in MQTT 5 broker for the reasons Mosquitto 2.0 never sends.
import { createServer, type AddressInfo, type Server } from 'node:net';
import { Aedes } from 'aedes';
import { afterEach, describe, expect, it } from 'vitest';
import type { IncomingMessage } from '../../src/bus/core-bus.js';
import { ExternalBus } from '../../src/bus/external-bus.js';
import { PacketTooLargeError } from '../../src/bus/mqtt5-session.js';
import { silentLogger } from '../../src/log.js';
import { topics } from '../../src/protocol/topics.js';
import { ChildClient, type ChildClientOptions } from '../fixtures/bus/child-client.js';
import { startMqtt5StandIn, type Mqtt5StandIn } from '../fixtures/bus/mqtt5-stand-in.js';
import { memoryLogger } from '../helpers/memory-logger.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';

const will = (): string => JSON.stringify({ online: false, ts: Date.now() });

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function bareAedes(): Promise<{ url: string; close: () => Promise<void> }> {
  const broker = await Aedes.createBroker();
  const server: Server = createServer((socket) => broker.handle(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    close: async () => {
      await new Promise<void>((resolve) => broker.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('ExternalBus over MQTT 5', () => {
  let mosquitto: MosquittoHandle | undefined;
  let standIn: Mqtt5StandIn | undefined;
  let aedes: { url: string; close: () => Promise<void> } | undefined;
  let bus: ExternalBus | undefined;
  const clients: ChildClient[] = [];

  const client = async (options: Partial<ChildClientOptions> & { url: string }): Promise<ChildClient> => {
    const child = new ChildClient(options);
    clients.push(child);
    await child.connected();
    return child;
  };

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((child) => child.crash()));
    await bus?.close();
    bus = undefined;
    await mosquitto?.stop();
    await standIn?.close();
    await aedes?.close();
    mosquitto = undefined;
    standIn = undefined;
    aedes = undefined;
  });

  it('sends message expiry and user properties to MQTT 5 subscribers; a 3.1.1 subscriber gets the same message without them', async () => {
    mosquitto = await startMosquitto();
    bus = await ExternalBus.connect({ url: mosquitto.url, log: silentLogger(), willPayload: will });
    expect(bus.protocolVersion).toBe(5);
    const v5 = await client({ url: mosquitto.url, protocolVersion: 5 });
    const v311 = await client({ url: mosquitto.url });
    await v5.subscribe(topics.invoke('lamp'));
    await v311.subscribe(topics.invoke('lamp'));

    await bus.publish(topics.invoke('lamp'), '{"n":1}', {
      qos: 1,
      expirySec: 30,
      userProperties: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });

    const got5 = await v5.message(topics.invoke('lamp'));
    expect(got5.payload).toBe('{"n":1}');
    expect(got5.properties?.['userProperties']).toEqual({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' });
    const expiry = got5.properties?.['messageExpiryInterval'];
    expect(typeof expiry === 'number' && expiry > 0 && expiry <= 30).toBe(true);
    const got311 = await v311.message(topics.invoke('lamp'));
    expect(got311.payload).toBe('{"n":1}');
    expect(got311.properties).toBeUndefined();
  });

  it('hands the properties of incoming MQTT 5 messages to handlers', async () => {
    mosquitto = await startMosquitto();
    bus = await ExternalBus.connect({ url: mosquitto.url, log: silentLogger(), willPayload: will });
    const inbox: IncomingMessage[] = [];
    await bus.subscribe('homeclaw/call/+/+', (message) => inbox.push(message));
    const caller = await client({ url: mosquitto.url, protocolVersion: 5 });
    await caller.publish(topics.call('time', 'now'), '{"request_id":"r1"}', {
      properties: { userProperties: { traceparent: 'abc' }, messageExpiryInterval: 60 },
    });
    await until(() => inbox.length === 1, 'the call');
    expect(inbox[0]!.properties?.userProperties).toEqual({ traceparent: 'abc' });
    expect(inbox[0]!.properties?.expirySec).toBeGreaterThan(0);
  });

  it('tells the publisher when no client subscribes (PUBACK reason 0x10)', async () => {
    mosquitto = await startMosquitto();
    bus = await ExternalBus.connect({ url: mosquitto.url, log: silentLogger(), willPayload: will });
    // The receipt is the broker's answer: with nobody subscribed it says so...
    await expect(bus.publishWithReceipt(topics.invoke('ghost'), '{}', { qos: 1 })).resolves.toEqual({ noSubscribers: true });
    // ...and with a subscriber it does not.
    const plugin = await client({ url: mosquitto.url });
    await plugin.subscribe(topics.invoke('ghost'));
    await expect(bus.publishWithReceipt(topics.invoke('ghost'), '{}', { qos: 1 })).resolves.toEqual({});
  });

  it('names the reason of a refused publish (Not authorized, 0x87) and logs one line per reason and window', async () => {
    mosquitto = await startMosquitto({
      users: { core: 'core-secret' },
      acl: 'user core\ntopic read homeclaw/#\ntopic write homeclaw/core/status\n',
    });
    const { log, lines } = memoryLogger();
    bus = await ExternalBus.connect({ url: mosquitto.url, username: 'core', password: 'core-secret', log, willPayload: will });
    await expect(bus.publish(topics.invoke('lamp'), '{}', { qos: 1 })).rejects.toThrow(
      'the broker refused the message on homeclaw/plugins/invoke/lamp: Not authorized (reason code 0x87)',
    );
    await expect(bus.publish(topics.invoke('lamp'), '{}', { qos: 1 })).rejects.toThrow(/Not authorized/);
    const refusals = lines.filter((line) => line.msg === 'the broker refused a publish');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ reason_code: 0x87, reason: 'Not authorized (reason code 0x87)', topic: topics.invoke('lamp') });
    // The session is still usable: a permitted publish goes through.
    await bus.publish(topics.coreStatus(), '{"online":true,"ts":1}', { qos: 1, retain: true });
  });

  it("refuses a message over the broker's maximum packet size before sending it, and keeps the connection", async () => {
    mosquitto = await startMosquitto({ extraConfig: 'max_packet_size 2000' });
    const lost: string[] = [];
    bus = await ExternalBus.connect({ url: mosquitto.url, log: silentLogger(), willPayload: will });
    bus.onConnectionLost((reason) => lost.push(reason));
    const subscriber = await client({ url: mosquitto.url });
    await subscriber.subscribe(topics.invoke('lamp'));
    const big = JSON.stringify({ text: 'x'.repeat(3000) });
    const refused = await bus.publish(topics.invoke('lamp'), big, { qos: 1 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(PacketTooLargeError);
    expect((refused as Error).message).toMatch(/more than the broker's maximum packet size of 2000 bytes/);
    await bus.publish(topics.invoke('lamp'), '{"small":true}', { qos: 1 });
    expect((await subscriber.message(topics.invoke('lamp'))).payload).toBe('{"small":true}');
    expect(bus.connected).toBe(true);
    expect(lost).toEqual([]);
    // Without the check Mosquitto drops the whole session for it (DISCONNECT 0x95, Packet too large).
    expect(mosquitto.output()).not.toMatch(/oversize packet/);
  });

  it('with protocol_version 3.1.1 speaks 3.1.1 and sends no properties', async () => {
    mosquitto = await startMosquitto();
    bus = await ExternalBus.connect({ url: mosquitto.url, log: silentLogger(), willPayload: will, protocolVersion: 4 });
    expect(bus.protocolVersion).toBe(4);
    const v5 = await client({ url: mosquitto.url, protocolVersion: 5 });
    await v5.subscribe(topics.invoke('lamp'));
    await bus.publish(topics.invoke('lamp'), '{}', { qos: 1, expirySec: 5, userProperties: { traceparent: 'x' } });
    const got = await v5.message(topics.invoke('lamp'));
    expect(got.properties?.['userProperties']).toBeUndefined();
    expect(got.properties?.['messageExpiryInterval']).toBeUndefined();
    expect(mosquitto.output()).toMatch(/\(p2, c1, k30\)/); // Mosquitto logs protocol level 4 as "p2" (3.1.1)
  });

  it('falls back to 3.1.1 when the broker refuses MQTT 5 (Aedes: CONNACK "unacceptable protocol version"), logging it once', async () => {
    aedes = await bareAedes();
    const { log, lines } = memoryLogger();
    bus = await ExternalBus.connect({ url: aedes.url, log, willPayload: will });
    expect(bus.protocolVersion).toBe(4);
    const fallback = lines.filter((line) => /refused MQTT 5/.test(line.msg));
    expect(fallback).toHaveLength(1);
    expect(fallback[0]).toMatchObject({ code: 1 });
    expect(String(fallback[0]!['connack'])).toMatch(/Unacceptable protocol version/i);
    // The 3.1.1 session works: a round trip through the broker.
    const inbox: IncomingMessage[] = [];
    await bus.subscribe(topics.heartbeat('+'), (message) => inbox.push(message));
    await bus.publish(topics.heartbeat('lamp'), '{"epoch":1,"seq":0,"ts":1}', { qos: 1, expirySec: 5 });
    await until(() => inbox.length === 1, 'the heartbeat');
    expect(inbox[0]!.properties).toBeUndefined();
    expect(lines.filter((line) => line.msg === 'broker connection error')).toEqual([]);
  });

  it('logs the reason an MQTT 5 broker gives for a DISCONNECT and passes it to connection-lost listeners', async () => {
    standIn = await startMqtt5StandIn();
    const { log, lines } = memoryLogger();
    bus = await ExternalBus.connect({ url: standIn.url, log, willPayload: will, reconnectDelayMs: 60_000 });
    expect(standIn.connects[0]).toMatchObject({ protocolVersion: 5 });
    const lost: string[] = [];
    bus.onConnectionLost((reason) => lost.push(reason));
    standIn.disconnectAll(0x8e, 'another client connected with this client id');
    await until(() => lost.length === 1, 'connection lost');
    expect(lost[0]).toBe('the broker disconnected the Core: Session taken over (reason code 0x8E): another client connected with this client id');
    expect(lines.find((line) => line.msg === 'the broker disconnected the Core')).toMatchObject({
      reason_code: 0x8e,
      reason: 'Session taken over (reason code 0x8E)',
      reason_string: 'another client connected with this client id',
    });
  });

  it('names the SUBACK reason code of a refused subscription', async () => {
    standIn = await startMqtt5StandIn({ refuseFilters: { [topics.result('+')]: 0x87 } });
    const { log, lines } = memoryLogger();
    bus = await ExternalBus.connect({ url: standIn.url, log, willPayload: will });
    await expect(bus.subscribe(topics.result('+'), () => undefined)).rejects.toThrow(
      `external MQTT broker refused the subscription to ${topics.result('+')}: Not authorized (reason code 0x87) (check its ACL)`,
    );
    expect(lines.find((line) => line.msg === 'the broker refused a subscribe')).toMatchObject({ reason_code: 0x87, filter: topics.result('+') });
    await bus.subscribe(topics.heartbeat('+'), () => undefined);
  });
});

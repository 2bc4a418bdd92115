// ExternalBus against a real Mosquitto started by the test.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MqttClient } from 'mqtt';
import type { IncomingMessage } from '../../src/bus/core-bus.js';
import { ExternalBus } from '../../src/bus/external-bus.js';
import { silentLogger } from '../../src/log.js';
import { topics } from '../../src/protocol/topics.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { freePort } from '../helpers/ports.js';
import { ChildClient } from '../fixtures/bus/child-client.js';

const log = silentLogger();
const will = (): string => JSON.stringify({ online: false, ts: Date.now() });
const birth = (): string => JSON.stringify({ online: true, ts: Date.now() });

async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('ExternalBus with Mosquitto', () => {
  let mosquitto: MosquittoHandle;
  let bus: ExternalBus | undefined;
  const clients: ChildClient[] = [];

  const client = (options: Partial<ConstructorParameters<typeof ChildClient>[0]> = {}): ChildClient => {
    const child = new ChildClient({ url: mosquitto.url, ...options });
    clients.push(child);
    return child;
  };

  beforeEach(async () => {
    mosquitto = await startMosquitto();
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((child) => child.crash()));
    await bus?.close();
    bus = undefined;
    await mosquitto.stop();
  });

  it('publishes and subscribes through the broker', async () => {
    bus = await ExternalBus.connect({ url: mosquitto.url, log, willPayload: will });
    expect(bus.embedded).toBe(false);
    const inbox: IncomingMessage[] = [];
    await bus.subscribe(topics.channelIn('+'), (message) => inbox.push(message));
    const child = client();
    await child.connected();
    await child.subscribe(topics.channelOut('kitchen'));

    await child.publish(topics.channelIn('kitchen'), '{"text":"hello"}');
    await until(() => inbox.length === 1);
    expect(inbox[0]).toMatchObject({ topic: topics.channelIn('kitchen'), publisher: undefined });
    expect(JSON.parse(inbox[0]!.payload.toString())).toEqual({ text: 'hello' });

    await bus.publish(topics.channelOut('kitchen'), '{"text":"hi"}');
    expect(JSON.parse((await child.message(topics.channelOut('kitchen'))).payload!)).toEqual({ text: 'hi' });
  });

  it('isolates handlers and unsubscribes', async () => {
    bus = await ExternalBus.connect({ url: mosquitto.url, log, willPayload: will });
    const seen: string[] = [];
    await bus.subscribe(topics.heartbeat('+'), () => {
      throw new Error('boom');
    });
    const unsubscribe = await bus.subscribe(topics.heartbeat('+'), (message) => seen.push(message.topic));
    await bus.publish(topics.heartbeat('a'), '{}');
    await until(() => seen.length === 1);
    await unsubscribe();
    await bus.publish(topics.heartbeat('b'), '{}');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(seen).toEqual([topics.heartbeat('a')]);
  });

  it('leaves a retained offline will when its connection dies, and a fresh birth after reconnecting', async () => {
    bus = await ExternalBus.connect({
      url: mosquitto.url,
      log,
      willPayload: will,
      birthPayload: birth,
      reconnectDelayMs: 100,
    });
    const observer = client();
    await observer.connected();
    await observer.subscribe(topics.coreStatus());
    expect(JSON.parse((await observer.message(topics.coreStatus())).payload!)).toMatchObject({ online: true });

    // Kill the TCP connection under the client: no DISCONNECT, so Mosquitto must publish the will.
    (bus as unknown as { client: MqttClient }).client.stream.destroy();
    await until(() => observer.messages(topics.coreStatus()).length >= 3);
    expect(bus.connected).toBe(true);
    const statuses = observer.messages(topics.coreStatus()).map((e) => JSON.parse(e.payload!).online);
    expect(statuses).toEqual([true, false, true]);

    // retained: a newcomer sees the latest status at once
    const late = client();
    await late.connected();
    await late.subscribe(topics.coreStatus());
    const retained = await late.message(topics.coreStatus());
    expect(retained.retain).toBe(true);
    expect(JSON.parse(retained.payload!)).toMatchObject({ online: true });
  });

  it('reconnects after a Mosquitto restart and resubscribes', async () => {
    bus = await ExternalBus.connect({ url: mosquitto.url, log, willPayload: will, reconnectDelayMs: 100, maxReconnectDelayMs: 400 });
    const inbox: string[] = [];
    await bus.subscribe(topics.heartbeat('+'), (message) => inbox.push(message.payload.toString()));

    await mosquitto.kill();
    await until(() => !bus!.connected);
    await expect(bus.publish(topics.heartbeat('x'), '{}')).rejects.toThrow(/not connected/);
    await new Promise((resolve) => setTimeout(resolve, 600)); // a few failed attempts
    await mosquitto.start();
    await until(() => bus!.connected);

    const child = client();
    await child.connected();
    // the subscription is made again right after CONNACK, asynchronously: retry until it is in place
    for (let attempt = 0; attempt < 30 && inbox.length === 0; attempt++) {
      await child.publish(topics.heartbeat('weather'), '{"seq":1}');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(inbox[0]).toBe('{"seq":1}');
    await bus.publish(topics.heartbeat('core-check'), '{}');
  });

  it('fails clearly when the broker is not there', async () => {
    const port = await freePort();
    await expect(
      ExternalBus.connect({ url: `mqtt://127.0.0.1:${port}`, log, willPayload: will, connectTimeoutMs: 800, reconnectDelayMs: 100 }),
    ).rejects.toThrow(/did not accept a connection/);
  });

  it('fails clearly on refused credentials', async () => {
    await mosquitto.stop();
    mosquitto = await startMosquitto({ users: { 'homeclaw-core': 'right' } });
    await expect(ExternalBus.connect({ url: mosquitto.url, username: 'homeclaw-core', password: 'wrong', log, willPayload: will })).rejects.toThrow(
      /refused the connection/,
    );
    bus = await ExternalBus.connect({ url: mosquitto.url, username: 'homeclaw-core', password: 'right', log, willPayload: will });
    expect(bus.connected).toBe(true);
  });
});

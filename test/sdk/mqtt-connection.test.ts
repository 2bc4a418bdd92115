// The plugin's MQTT client: TCP_NODELAY on every (re)connect and a reconnect delay that backs off.
import type { Socket } from 'node:net';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMqttClient } from '../../src/sdk/mqtt-connection.js';
import { startTestBroker, type TestBroker } from '../fixtures/sdk/broker.js';

let broker: TestBroker;

beforeAll(async () => {
  broker = await startTestBroker();
});

afterAll(async () => {
  await broker?.close();
});

/** Node keeps the requested TCP_NODELAY state under an internal symbol; no public getter exists. */
function noDelayOf(stream: unknown): unknown {
  const socket = stream as Socket & Record<symbol, unknown>;
  const key = Object.getOwnPropertySymbols(socket).find((s) => s.description === 'kSetNoDelay');
  return key === undefined ? undefined : socket[key];
}

function nextConnect(client: MqttClient): Promise<void> {
  return new Promise((resolve) => client.once('connect', () => resolve()));
}

function makeClient(url: string): MqttClient {
  const client = createMqttClient({
    url,
    clientId: `nodelay-${process.pid}`,
    keepalive_sec: 30,
    will: { topic: 'test/will', payload: '{}' },
    reconnect_period_ms: 100,
    reconnect_max_ms: 800,
  });
  // Refused reconnects are expected here; an EventEmitter without an error listener would throw.
  client.on('error', () => {});
  return client;
}

describe('createMqttClient', () => {
  it('sets TCP_NODELAY on the first connection and again after a reconnect', async () => {
    const client = makeClient(broker.url);
    try {
      await nextConnect(client);
      expect(noDelayOf(client.stream)).toBe(true);
      const firstStream = client.stream;
      const reconnected = nextConnect(client);
      await broker.restart({ downMs: 200 });
      await reconnected;
      expect(client.stream).not.toBe(firstStream);
      expect(noDelayOf(client.stream)).toBe(true);
    } finally {
      await client.endAsync(true);
    }
  });

  it('doubles the reconnect delay while the broker is away, up to the maximum, and resets on connect', async () => {
    const client = makeClient(broker.url);
    try {
      await nextConnect(client);
      const periods: number[] = [];
      client.on('reconnect', () => periods.push(client.options.reconnectPeriod ?? -1));
      await broker.restart({ downMs: 2500 });
      await nextConnect(client);
      // Read after each attempt started: 200, 400, 800, 800, ...
      expect(periods.slice(0, 3)).toEqual([200, 400, 800]);
      expect(Math.max(...periods)).toBe(800);
      expect(client.options.reconnectPeriod).toBe(100);
    } finally {
      await client.endAsync(true);
    }
  });
});

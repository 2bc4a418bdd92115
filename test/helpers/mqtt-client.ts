// A real mqtt.js client for tests, with "wait for a message" helpers.
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { topicMatches } from '../../src/protocol/topics.js';

export interface Received {
  topic: string;
  payload: Buffer;
  retain: boolean;
  json<T = Record<string, unknown>>(): T;
}

export interface TestClient {
  client: MqttClient;
  received: Received[];
  subscribe(filter: string): Promise<void>;
  publish(topic: string, payload: string | Buffer | object, options?: { qos?: 0 | 1; retain?: boolean }): Promise<void>;
  waitFor(filter: string, predicate?: (m: Received) => boolean, timeoutMs?: number): Promise<Received>;
  /** Resolves true if no matching message arrives within ms. */
  quiet(filter: string, ms: number, predicate?: (m: Received) => boolean): Promise<boolean>;
  end(force?: boolean): Promise<void>;
}

export async function connectTestClient(url: string, options: IClientOptions = {}): Promise<TestClient> {
  const client = await mqtt.connectAsync(url, { protocolVersion: 4, reconnectPeriod: 0, connectTimeout: 5000, ...options });
  const received: Received[] = [];
  const waiters = new Set<{ filter: string; predicate: (m: Received) => boolean; resolve: (m: Received) => void }>();
  client.on('message', (topic, payload, packet) => {
    const m: Received = {
      topic,
      payload,
      retain: packet.retain,
      json: <T>() => JSON.parse(payload.toString()) as T,
    };
    received.push(m);
    for (const w of [...waiters]) {
      if (topicMatches(w.filter, topic) && w.predicate(m)) {
        waiters.delete(w);
        w.resolve(m);
      }
    }
  });
  return {
    client,
    received,
    async subscribe(filter) {
      await client.subscribeAsync(filter, { qos: 1 });
    },
    async publish(topic, payload, opts = {}) {
      const body = Buffer.isBuffer(payload) || typeof payload === 'string' ? payload : JSON.stringify(payload);
      await client.publishAsync(topic, body, { qos: opts.qos ?? 1, retain: opts.retain ?? false });
    },
    waitFor(filter, predicate = () => true, timeoutMs = 5000) {
      const already = received.find((m) => topicMatches(filter, m.topic) && predicate(m));
      if (already) return Promise.resolve(already);
      return new Promise((resolve, reject) => {
        const waiter = {
          filter,
          predicate,
          resolve: (m: Received) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no message on ${filter} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    async quiet(filter, ms, predicate = () => true) {
      const start = received.length;
      await new Promise((r) => setTimeout(r, ms));
      return !received.slice(start).some((m) => topicMatches(filter, m.topic) && predicate(m));
    },
    async end(force = false) {
      await client.endAsync(force);
    },
  };
}

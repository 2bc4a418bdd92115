// Packets written in one event-loop turn leave together (one write): nothing is lost, reordered or held
// back. A real Mosquitto, the Core's external bus, and a raw subscriber.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExternalBus } from '../../src/bus/external-bus.js';
import { silentLogger } from '../../src/log.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { connectTestClient } from '../helpers/mqtt-client.js';

let mosquitto: MosquittoHandle;

beforeAll(async () => {
  mosquitto = await startMosquitto({ extraConfig: 'set_tcp_nodelay true' });
});

afterAll(async () => {
  await mosquitto?.stop();
});

describe('write coalescing on the external bus', () => {
  it('delivers a burst published in one turn completely and in order, and a lone publish too', async () => {
    const bus = await ExternalBus.connect({ url: mosquitto.url, log: silentLogger(), willPayload: () => '{"online":false,"ts":0}' });
    const observer = await connectTestClient(mosquitto.url);
    try {
      await observer.subscribe('coalesce/#');
      const acks = Array.from({ length: 200 }, (_, i) => bus.publish(`coalesce/burst`, String(i), { qos: 1 }));
      await Promise.all(acks);
      await observer.waitFor('coalesce/burst', (m) => m.payload.toString() === '199');
      const burst = observer.received.filter((m) => m.topic === 'coalesce/burst').map((m) => Number(m.payload.toString()));
      expect(burst).toEqual(Array.from({ length: 200 }, (_, i) => i));

      // A single publish from a timer (nothing else happening) is not held back until some later write.
      await new Promise((r) => setTimeout(r, 20));
      await bus.publish('coalesce/lone', 'alone', { qos: 1 });
      expect((await observer.waitFor('coalesce/lone', undefined, 5000)).payload.toString()).toBe('alone');
    } finally {
      await observer.end(true);
      await bus.close();
    }
  });
});

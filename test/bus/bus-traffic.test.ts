// The Core bus counts what it publishes and what is delivered to it (messages and payload bytes), with
// the embedded Aedes broker and as a client of a real Mosquitto, a real MQTT client in another process on
// the other side. A message is handed once to each handler however many of the Core's subscriptions it
// matches, and not counted at all when none does. Embedded and over MQTT 3.1.1 a message matching two
// subscriptions arrives once; over MQTT 5 Mosquitto sends one copy per matching subscription, and each
// copy arriving is counted (the bytes did cross the wire).
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createBus, type CreatedBus } from '../../src/bus/create-bus.js';
import type { CoreConfig } from '../../src/config/types.js';
import { silentLogger } from '../../src/log.js';
import { topics } from '../../src/protocol/topics.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { applyConfigDefaults } from '../../src/config/validate.js';

function config(url: string | null, protocolVersion: 5 | '3.1.1' = 5): CoreConfig {
  return {
    data_dir: './data',
    log_level: 'silent',
    broker: {
      ...applyConfigDefaults().broker,
      url,
      username: null,
      password: null,
      host: '127.0.0.1',
      port: 0,
      ws_port: 0,
      allow_anonymous: 'auto',
      max_payload_bytes: 262_144,
      protocol_version: protocolVersion,
    },
  } as CoreConfig; // the bus reads only data_dir and broker (the defaults, with these settings)
}

let created: CreatedBus | undefined;
let mosquitto: MosquittoHandle | undefined;
let db: Database.Database | undefined;
let peer: ChildClient | undefined;

afterEach(async () => {
  await peer?.end();
  await created?.close();
  await mosquitto?.stop();
  db?.close();
  created = mosquitto = db = peer = undefined;
});

async function exchange(url: string | null, peerUrl: () => string, copies: number, protocolVersion: 5 | '3.1.1' = 5): Promise<void> {
  db = new Database(':memory:');
  created = await createBus({ config: config(url, protocolVersion), log: silentLogger(), db });
  const { bus } = created;
  const received: string[] = [];
  const wildcard: string[] = [];
  // Two subscriptions matching the same topic: each handler is called once per message.
  await bus.subscribe(topics.channelIn('kitchen'), (m) => received.push(m.payload.toString()));
  await bus.subscribe(topics.channelIn('+'), (m) => wildcard.push(m.payload.toString()));
  peer = new ChildClient({ url: peerUrl() });
  await peer.connected();
  await peer.subscribe(topics.channelOut('kitchen'));
  expect(bus.traffic).toEqual({ published: 0, published_bytes: 0, received: 0, received_bytes: 0 });

  const out = ['{"text":"hello"}', '{"text":"héllo, ünïcode"}'];
  for (const payload of out) await bus.publish(topics.channelOut('kitchen'), payload);
  await peer.waitFor((e) => e.event === 'message' && e.payload === out[1]);
  const incoming = ['{"text":"one"}', '{"text":"two"}', '{"text":"three"}'];
  for (const payload of incoming) await peer.publish(topics.channelIn('kitchen'), payload);
  // Nobody in the Core listens there: not counted.
  await peer.publish(topics.channelOut('hallway'), '{"text":"not for the Core"}');
  const deadline = Date.now() + 5_000;
  while ((received.length < incoming.length || (bus.traffic?.received ?? 0) < incoming.length * copies) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  // Any duplicate copy would have arrived by now, right behind the last expected one.
  await new Promise((r) => setTimeout(r, 100));
  expect(received).toEqual(incoming);
  expect(wildcard).toEqual(incoming);

  const bytes = (texts: string[]): number => texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0);
  expect(bus.traffic).toEqual({ published: 2, published_bytes: bytes(out), received: 3 * copies, received_bytes: bytes(incoming) * copies });
}

describe('Core bus traffic counts', () => {
  it('embedded broker', async () => {
    await exchange(null, () => `mqtt://127.0.0.1:${created!.broker!.tcpPort}`, 1);
  });

  it('external broker (Mosquitto) over MQTT 5: one copy per matching subscription, each handler called once', async () => {
    mosquitto = await startMosquitto();
    const url = mosquitto.url;
    await exchange(url, () => url, 2);
  });

  it('external broker (Mosquitto) over MQTT 3.1.1', async () => {
    mosquitto = await startMosquitto();
    const url = mosquitto.url;
    await exchange(url, () => url, 1, '3.1.1');
  });
});

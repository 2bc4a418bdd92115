import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createBus, type CreatedBus } from '../../src/bus/create-bus.js';
import type { CoreConfig } from '../../src/config/types.js';
import { silentLogger } from '../../src/log.js';
import { topics } from '../../src/protocol/topics.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { applyConfigDefaults } from '../../src/config/validate.js';

function config(broker: Partial<CoreConfig['broker']> = {}): CoreConfig {
  return {
    data_dir: './data',
    log_level: 'silent',
    broker: {
      ...applyConfigDefaults().broker,
      url: null,
      username: null,
      password: null,
      host: '127.0.0.1',
      port: 0,
      ws_port: 0,
      allow_anonymous: 'auto',
      max_payload_bytes: 262_144,
      ...broker,
    },
  } as CoreConfig; // the bus reads only data_dir and broker (the defaults, with these settings)
}

describe('createBus', () => {
  let created: CreatedBus | undefined;
  let mosquitto: MosquittoHandle | undefined;
  let db: Database.Database | undefined;
  let child: ChildClient | undefined;

  afterEach(async () => {
    await child?.crash();
    await created?.close();
    await mosquitto?.stop();
    db?.close();
    created = undefined;
    mosquitto = undefined;
    child = undefined;
  });

  it('embeds Aedes by default, WebSocket disabled by ws_port 0, credentials wired to the broker', async () => {
    db = new Database(':memory:');
    created = await createBus({ config: config(), log: silentLogger(), db });
    expect(created.bus.embedded).toBe(true);
    expect(created.broker?.tcpPort).toBeGreaterThan(0);
    expect(created.broker?.wsPort).toBeNull();
    const { password } = await created.credentials.add('weather', 'plugin');
    const heartbeats: string[] = [];
    await created.bus.subscribe(topics.heartbeat('+'), (message) => heartbeats.push(message.publisher?.username ?? '?'));
    child = new ChildClient({ url: `mqtt://127.0.0.1:${created.broker!.tcpPort}`, username: 'weather', password });
    await child.connected();
    await child.publish(topics.heartbeat('weather'), '{}');
    const deadline = Date.now() + 5_000;
    while (heartbeats.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heartbeats).toEqual(['weather']);
  });

  it('opens an ephemeral WebSocket port on request', async () => {
    db = new Database(':memory:');
    created = await createBus({ config: config(), log: silentLogger(), db, wsPort: 0 });
    expect(created.broker?.wsPort).toBeGreaterThan(0);
  });

  it('becomes a client of the external broker when broker.url is set', async () => {
    mosquitto = await startMosquitto();
    db = new Database(':memory:');
    created = await createBus({ config: config({ url: mosquitto.url }), log: silentLogger(), db });
    expect(created.bus.embedded).toBe(false);
    expect(created.broker).toBeUndefined();
    child = new ChildClient({ url: mosquitto.url });
    await child.connected();
    await child.subscribe(topics.channelOut('kitchen'));
    await created.bus.publish(topics.channelOut('kitchen'), '{"text":"hi"}');
    expect(JSON.parse((await child.message(topics.channelOut('kitchen'))).payload!)).toEqual({ text: 'hi' });
  });
});

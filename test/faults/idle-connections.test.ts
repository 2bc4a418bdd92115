// Attack: TCP connections to the MQTT port that never log in. The broker closes each after its connect
// timeout, but nothing bounded how many could wait at once: 15,000 from one process held 15,000 file
// descriptors and 275 MB of the Core, and past the descriptor limit nothing could connect. Defence: at most
// 128 connections per address and 1,024 in all may wait for their CONNECT; over that the oldest waiting one
// is closed, so holding the limit full does not keep out a real client from the same address.
import { createConnection, type Socket } from 'node:net';
import { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PENDING_PER_ADDRESS } from '../../src/bus/pending-connections.js';
import { connectPlugin, silentSdkLogger } from '../../src/sdk/index.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { openIdle as openIdleFrom, type IdleConnection } from '../helpers/idle-connection.js';

let core: TestCore;
const held: Socket[] = [];

beforeAll(async () => {
  core = await startTestCore();
}, 120_000);

afterAll(async () => {
  for (const socket of held) socket.destroy();
  await core?.cleanup();
});

const openIdle = (localAddress: string): Promise<IdleConnection> => openIdleFrom(Number(core.mqttPort), localAddress, held);

/** Connects an MQTT client from `localAddress`; resolves whether the broker accepted it. */
function mqttLogin(localAddress: string): Promise<boolean> {
  return new Promise((resolve) => {
    const client = new MqttClient(() => createConnection({ host: '127.0.0.1', port: Number(core.mqttPort), localAddress }), {
      protocol: 'mqtt',
      protocolVersion: 4,
      clientId: `same-address-${Date.now()}`,
      reconnectPeriod: 0,
      connectTimeout: 10_000,
    });
    const finish = (ok: boolean): void => {
      resolve(ok);
      client.end(true);
    };
    client.once('connect', () => finish(true));
    client.once('error', () => finish(false));
    client.once('close', () => finish(false));
  });
}

describe('connections that never log in', () => {
  it(`at most ${MAX_PENDING_PER_ADDRESS} wait per address; the oldest are closed at once, and others still connect`, async () => {
    const results = await Promise.all(Array.from({ length: MAX_PENDING_PER_ADDRESS + 20 }, () => openIdle('127.0.0.2')));
    const closed = results.filter((r) => r.closedAtOnce).length;
    expect(closed).toBe(20);
    // A plugin from another address connects and registers meanwhile.
    const plugin = await connectPlugin({
      url: core.mqttUrl,
      log: silentSdkLogger(),
      descriptor: {
        id: 'porch-light',
        name: 'Porch light',
        description: 'Switches the porch light.',
        capabilities: [{ id: 'on', description: 'On.', parameters: [] }],
      },
      handlers: { on: () => 'on' },
    });
    expect(core.ctx.registry.get('porch-light')?.state).toBe('online');
    await plugin.close();
    // Once the waiting ones go, the address may connect again.
    for (const socket of held.splice(0)) socket.destroy();
    await new Promise((r) => setTimeout(r, 200));
    expect((await openIdle('127.0.0.2')).closedAtOnce).toBe(false);
  }, 60_000);

  it('a client from an address whose limit is held full still logs in', async () => {
    const idle = await Promise.all(Array.from({ length: MAX_PENDING_PER_ADDRESS }, () => openIdle('127.0.0.3')));
    expect(idle.filter((r) => r.closedAtOnce)).toHaveLength(0);
    expect(await mqttLogin('127.0.0.3')).toBe(true);
    // One silent connection (the oldest) made room for it, and only one.
    const destroyed = (): number => idle.filter((r) => r.socket.destroyed).length;
    for (let i = 0; i < 100 && destroyed() < 1; i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 200));
    expect(destroyed()).toBe(1);
  }, 60_000);
});

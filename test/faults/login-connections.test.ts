// Attack: one login (a plugin device's credential, stolen or misbehaving) opens connection after connection,
// each with a new client id. Every one is a file descriptor and a client in the broker: without a bound a
// single credential could take every descriptor the Core has, and then nothing else connects, not even the
// Core's own database files open. Defence: at most `broker.login.max_connections` connections per login;
// more are refused with CONNACK 3 (server unavailable, so a well-behaved client retries later), while a
// reconnect under a client id the login already holds is always let in (it replaces the old connection).
import Database from 'better-sqlite3';
import { MqttClient } from 'mqtt';
import { connect as netConnect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEmbeddedBroker, type EmbeddedBrokerHandle } from '../../src/bus/broker.js';
import { CredentialStore } from '../../src/bus/credentials.js';
import { silentLogger } from '../../src/log.js';

const LIMIT = 8;

describe('connections per login', () => {
  let db: Database.Database;
  let credentials: CredentialStore;
  let broker: EmbeddedBrokerHandle;
  const clients: MqttClient[] = [];

  /** Connects and resolves with the client when accepted, or the CONNACK return code when refused. */
  const login = (username: string, password: string, clientId: string): Promise<{ client?: MqttClient; code?: number }> =>
    new Promise((resolve) => {
      const client = new MqttClient(() => netConnect({ host: '127.0.0.1', port: broker.tcpPort }), {
        protocol: 'mqtt',
        protocolVersion: 4,
        username,
        password,
        clientId,
        reconnectPeriod: 0,
        connectTimeout: 10_000,
      });
      clients.push(client);
      client.once('connect', () => resolve({ client }));
      client.once('error', (error: Error & { code?: unknown }) => {
        resolve({ code: typeof error.code === 'number' ? error.code : -1 });
        client.end(true);
      });
    });

  /** Tries to log in for up to 5 s (a closed connection's place is given back when the broker sees it close). */
  const loginSoon = async (username: string, password: string, clientId: string): Promise<boolean> => {
    for (let i = 0; i < 50; i++) {
      if ((await login(username, password, clientId)).client) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  };

  beforeEach(async () => {
    db = new Database(':memory:');
    credentials = new CredentialStore(db);
    broker = await startEmbeddedBroker({
      port: 0,
      allowAnonymous: false,
      maxPayloadBytes: 10_000,
      credentials,
      maxConnectionsPerLogin: LIMIT,
      log: silentLogger(),
    });
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.endAsync(true).catch(() => {})));
    await broker.close();
    db.close();
  });

  it('refuses connections of one login beyond the limit, and others still connect', async () => {
    const lamp = await credentials.add('lamp', 'plugin');
    const heater = await credentials.add('heater', 'plugin');
    // The first login verifies the password; the rest, all at once, are recognised from it without a hash.
    const results = [await login('lamp', lamp.password, 'lamp-0')];
    results.push(...(await Promise.all(Array.from({ length: LIMIT + 3 }, (_, i) => login('lamp', lamp.password, `lamp-${i + 1}`)))));
    expect(results.filter((r) => r.client)).toHaveLength(LIMIT);
    expect(results.filter((r) => !r.client).map((r) => r.code)).toEqual([3, 3, 3, 3]);
    expect((await login('heater', heater.password, 'heater-0')).client).toBeDefined();

    // A connection of the login closes: its place is free again (once the broker has seen it close).
    await results.find((r) => r.client)!.client!.endAsync(true);
    expect(await loginSoon('lamp', lamp.password, 'lamp-again')).toBe(true);
    expect((await login('lamp', lamp.password, 'lamp-one-too-many')).code).toBe(3);
  });

  it('lets a login at its limit reconnect under a client id it holds', async () => {
    const lamp = await credentials.add('lamp', 'plugin');
    for (let i = 0; i < LIMIT; i++) expect((await login('lamp', lamp.password, `lamp-${i}`)).client).toBeDefined();
    // The device lost its network and comes back before the broker noticed: same client id, new connection.
    const first = clients.length;
    expect((await login('lamp', lamp.password, 'lamp-3')).client).toBeDefined();
    expect((await login('lamp', lamp.password, 'lamp-new')).code).toBe(3);
    // The replaced connection gave its place back: with one more closed, exactly one new one fits.
    await clients[first - LIMIT]!.endAsync(true);
    expect(await loginSoon('lamp', lamp.password, 'lamp-new')).toBe(true);
    expect((await login('lamp', lamp.password, 'lamp-newer')).code).toBe(3);
  });
});

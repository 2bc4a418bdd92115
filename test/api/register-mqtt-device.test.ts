// An MQTT device registered once by an administrator over HTTP, which then only heartbeats: who may
// claim its id (the device's credential must be allowed it), and how its liveness is read without a
// registration epoch. Real Core, embedded broker, MQTT clients in other processes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ChildClient } from '../fixtures/bus/child-client.js';

let core: TestCore;
const clients: ChildClient[] = [];
const FAN = {
  type: 'mqtt',
  id: 'attic-fan',
  name: 'Attic fan',
  description: 'The fan in the attic',
  capabilities: [{ id: 'spin', description: 'Spin the fan' }],
  heartbeat_interval_sec: 30,
};

beforeAll(async () => {
  core = await startTestCore();
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.crash()));
  await core?.cleanup();
});

async function login(name: string, pluginIds: string[]): Promise<ChildClient> {
  const created = await core.api<{ password: string }>('POST', '/api/credentials', { name, role: 'plugin', plugin_ids: pluginIds });
  const client = new ChildClient({ url: core.mqttUrl, username: name, password: created.body.password, clientId: `device-${name}` });
  clients.push(client);
  await client.connected();
  return client;
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('an MQTT device registered by an administrator', () => {
  it('is registered offline, owned by no client yet, with its heartbeat interval', async () => {
    const created = await core.api('POST', '/api/plugins/register', FAN);
    expect(created.status).toBe(201);
    expect(core.ctx.registry.get('attic-fan')).toMatchObject({
      owner: 'mqtt:unclaimed',
      state: 'offline',
      state_reason: "waiting for the device's first heartbeat",
      heartbeat_interval_sec: 30,
      descriptor: { type: 'mqtt', source: 'external' },
    });
  });

  it('refuses a heartbeat interval that is not a positive number', async () => {
    const refused = await core.api<{ problems: { path: string }[] }>('POST', '/api/plugins/register', { ...FAN, id: 'other-fan', heartbeat_interval_sec: -1 });
    expect(refused.status).toBe(400);
    expect(refused.body.problems.map((p) => p.path)).toContain('/heartbeat_interval_sec');
    expect(core.ctx.registry.get('other-fan')).toBeUndefined();
  });

  it('ignores the heartbeats of a credential not allowed the id (the broker refuses them)', async () => {
    const intruder = await login('porch-light', ['porch-light']);
    await intruder.publish(topics.heartbeat('attic-fan'), JSON.stringify({ epoch: 1, seq: 1, ts: Date.now() }), { qos: 0 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(core.ctx.registry.get('attic-fan')).toMatchObject({ owner: 'mqtt:unclaimed', state: 'offline' });
  });

  it('is claimed by the first heartbeat of a credential that lists the id, and comes online', async () => {
    const device = await login('fan-board', ['attic-fan']);
    await device.publish(topics.heartbeat('attic-fan'), JSON.stringify({ epoch: 5, seq: 1, ts: Date.now() }), { qos: 0 });
    await until(() => core.ctx.registry.get('attic-fan')?.state === 'online', 'the claim');
    expect(core.ctx.registry.get('attic-fan')?.owner).toBe('mqtt:user:fan-board');
  });

  it('ignores the will of an older run, takes the current one; the next heartbeat brings it back', async () => {
    const device = clients.find((client) => client !== clients[0])!;
    await device.publish(topics.status('attic-fan'), JSON.stringify({ state: 'offline', epoch: 4 }), { qos: 0 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(core.ctx.registry.get('attic-fan')?.state).toBe('online');
    await device.publish(topics.status('attic-fan'), JSON.stringify({ state: 'offline', epoch: 5 }), { qos: 0 });
    await until(() => core.ctx.registry.get('attic-fan')?.state === 'offline', 'the current will');
    // Rebooted: a new epoch in its heartbeat, no registration needed.
    await device.publish(topics.heartbeat('attic-fan'), JSON.stringify({ epoch: 6, seq: 1, ts: Date.now() }), { qos: 0 });
    await until(() => core.ctx.registry.get('attic-fan')?.state === 'online', 'the heartbeat after the reboot');
  });

  it('registering it again over HTTP keeps its owner and state', async () => {
    const updated = await core.api<{ change: string }>('POST', '/api/plugins/register', { ...FAN, description: 'The fan in the attic, on the south side' });
    expect(updated).toMatchObject({ status: 200, body: { change: 'updated' } });
    expect(core.ctx.registry.get('attic-fan')).toMatchObject({ owner: 'mqtt:user:fan-board', state: 'online' });
  });
});

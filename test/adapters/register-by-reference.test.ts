// Registration by reference through a real Core (embedded broker): a client publishes {id, epoch,
// descriptor_url} and the Core fetches the descriptor over HTTP, then acks or nacks on the usual topics.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { RegistrationAck } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { freePort } from '../helpers/ports.js';
import { ChildClient } from '../fixtures/bus/child-client.js';

const LAMP = { id: 'lamp', name: 'Lamp', description: 'A lamp on a relay', capabilities: [{ id: 'status', description: 'Is it on?' }] };
const requests: string[] = [];
let server: http.Server;
let base: string;
let core: TestCore;
const clients: ChildClient[] = [];

const routes: Record<string, { delayMs?: number; body: unknown }> = {
  '/lamp.json': { body: LAMP },
  '/anonymous.json': { body: { name: 'Fan', description: 'A fan', capabilities: [{ id: 'spin', description: 'Spin' }] } },
  '/bad.json': { body: { ...LAMP, capabilities: [{ id: 'status', description: 'x', parameters: [{ name: 'level', type: 'colour' }] }] } },
  '/slow-lamp.json': { delayMs: 400, body: { ...LAMP, id: 'slow' } },
};

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const route = routes[req.url ?? ''];
    if (!route) return void res.writeHead(404).end();
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(route.body)), route.delayMs ?? 0);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  core = await startTestCore();
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.crash()));
  await core?.cleanup();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function device(login?: { username: string; password: string }): Promise<ChildClient> {
  const client = new ChildClient({ url: core.mqttUrl, ...(login ?? {}) });
  clients.push(client);
  await client.connected();
  await client.subscribe(topics.registeredInvalid());
  return client;
}

async function register(client: ChildClient, id: string, message: Record<string, unknown>, ackTopic = topics.registered(id)): Promise<RegistrationAck> {
  if (ackTopic !== topics.registeredInvalid()) await client.subscribe(ackTopic);
  const before = client.messages(ackTopic).length;
  await client.publish(topics.register(), JSON.stringify(message), { qos: 0 });
  const event = await client.waitFor((e) => e.event === 'message' && e.topic === ackTopic && client.messages(ackTopic).indexOf(e) >= before, 10_000);
  return JSON.parse(event.payload ?? '{}') as RegistrationAck;
}

describe('registration by reference', () => {
  it('fetches the descriptor, registers it with the liveness of the message, and acks', async () => {
    const client = await device();
    const ack = await register(client, 'lamp', { id: 'lamp', epoch: 7, descriptor_url: `${base}/lamp.json`, heartbeat_interval_sec: 20 });
    expect(ack).toEqual({ plugin_id: 'lamp', ok: true });
    const record = core.ctx.registry.get('lamp');
    expect(record).toMatchObject({ state: 'online', epoch: 7, heartbeat_interval_sec: 20, descriptor: { name: 'Lamp', type: 'mqtt', source: 'external' } });
    expect(record?.descriptor.capabilities.map((c) => c.id)).toEqual(['status']);
  });

  it('takes the id from the message when the document has none', async () => {
    const client = await device();
    expect(await register(client, 'fan', { id: 'fan', epoch: 1, descriptor_url: `${base}/anonymous.json` })).toEqual({ plugin_id: 'fan', ok: true });
    expect(core.ctx.registry.get('fan')?.descriptor.name).toBe('Fan');
  });

  it.each([
    ['an unreachable document', { id: 'gone', epoch: 1, descriptor_url: 'closed-port' }, /^fetching http:\/\/127\.0\.0\.1:\d+\/x\.json failed: ECONNREFUSED$/],
    ['a missing document', { id: 'gone', epoch: 1, descriptor_url: '/missing.json' }, /answered HTTP 404$/],
    ['a document for another plugin', { id: 'gone', epoch: 1, descriptor_url: '/lamp.json' }, /is for plugin "lamp", not "gone"$/],
    [
      'descriptor fields beside the reference',
      { id: 'gone', epoch: 1, descriptor_url: '/lamp.json', name: 'Gone' },
      /carries only id, epoch, descriptor_url and heartbeat_interval_sec .*remove name$/,
    ],
    ['a URL that is not http(s)', { id: 'gone', epoch: 1, descriptor_url: 'file:///etc/passwd' }, /must match pattern/],
  ])('nacks %s, naming the reason at /descriptor_url', async (_what, message, reason) => {
    const client = await device();
    let url = String(message.descriptor_url);
    if (url.startsWith('/')) url = `${base}${url}`;
    if (url === 'closed-port') url = `http://127.0.0.1:${await freePort()}/x.json`;
    const ack = await register(client, 'gone', { ...message, descriptor_url: url });
    expect(ack.ok).toBe(false);
    expect(ack.errors?.find((error) => error.path === '/descriptor_url')?.message).toMatch(reason);
    expect(core.ctx.registry.get('gone')).toBeUndefined();
  });

  it('nacks an invalid fetched descriptor with every problem, its paths in that document', async () => {
    const client = await device();
    const ack = await register(client, 'lamp', { id: 'lamp', epoch: 8, descriptor_url: `${base}/bad.json` });
    expect(ack.ok).toBe(false);
    expect(ack.errors?.[0]).toEqual({
      path: '/descriptor_url',
      message: `the descriptor at ${base}/bad.json is invalid; the paths below are in that document`,
    });
    expect(ack.errors?.some((error) => error.path === '/capabilities/0/parameters/0/type')).toBe(true);
    expect(core.ctx.registry.get('lamp')?.epoch).toBe(7); // the earlier registration stands
  });

  it("refuses a descriptor_url on the Core's own HTTP API", async () => {
    const client = await device();
    const ack = await register(client, 'sneaky', { id: 'sneaky', epoch: 1, descriptor_url: `${core.httpUrl}/api/plugins` });
    expect(ack.errors?.[0]?.message).toMatch(/is the Core's own HTTP API .* a plugin may not call the Core itself/);
  });

  it('fetches once for a device that repeats its registration while the fetch is under way', async () => {
    const client = await device();
    await client.subscribe(topics.registered('slow'));
    const fetchesBefore = requests.filter((url) => url === '/slow-lamp.json').length;
    await client.publish(topics.register(), JSON.stringify({ id: 'slow', epoch: 1, descriptor_url: `${base}/slow-lamp.json` }), { qos: 0 });
    await client.publish(topics.register(), JSON.stringify({ id: 'slow', epoch: 2, descriptor_url: `${base}/slow-lamp.json` }), { qos: 0 });
    await client.message(topics.registered('slow'), 10_000);
    expect(requests.filter((url) => url === '/slow-lamp.json').length - fetchesBefore).toBe(1);
    // The newest message's liveness wins.
    expect(core.ctx.registry.get('slow')?.epoch).toBe(2);
  });

  it("checks the id against the client's credential before fetching anything", async () => {
    const created = await core.api<{ password: string }>('POST', '/api/credentials', { name: 'porch', role: 'plugin' });
    const client = await device({ username: 'porch', password: created.body.password });
    const fetchesBefore = requests.length;
    const ack = await register(client, 'lamp', { id: 'lamp', epoch: 9, descriptor_url: `${base}/lamp.json` }, topics.registeredInvalid());
    expect(ack).toMatchObject({
      plugin_id: null,
      ok: false,
      errors: [{ path: '/id', message: `this client's credentials do not allow the plugin id "lamp"` }],
    });
    expect(requests.length).toBe(fetchesBefore);
    expect(core.ctx.registry.get('lamp')?.epoch).toBe(7);
  });
});

// A device constrained like an ESP32 on PubSubClient or umqtt.simple: MQTT 3.1.1, a 256-byte packet
// buffer (checked by the client: a bigger packet is dropped and recorded), QoS 0 publishes only,
// keepalive 15 s, no retained subscriptions. It is the shipped MicroPython template run unchanged under
// CPython with a umqtt.simple shim, in its own process. It registers by reference, is invoked through
// the Core and answers; or an administrator registers it once over HTTP and it only heartbeats.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { InvocationContext } from '../../src/dispatch/dispatcher-api.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { startTinyDevice, TEMPLATE_DIR, type TinyDevice, type TraceEvent } from '../fixtures/micropython/tiny-device.js';
import { ensureBuilt } from './helpers.js';
import { aclFromDocs } from '../helpers/external-broker-docs.js';

const LAMP = readFileSync(join(TEMPLATE_DIR, 'lamp.json'), 'utf8');
/** What a conversation passes along: the long context a small device must not be sent unasked. */
const CONVERSATION: InvocationContext = {
  user_id: 'alice',
  user_name: 'Alice',
  channel_name: 'kitchen',
  session_id: '3b2f6a4c-1d5e-4f7a-8b9c-0d1e2f3a4b5c',
  user_input: 'could you please switch on the lamp on my desk, the one next to the window, thanks',
  chat_context: 'user: hello\nassistant: hi, how can I help?\n'.repeat(4),
  metadata: { locale: 'en-GB', device: 'kitchen tablet' },
};

const fetches: http.IncomingHttpHeaders[] = [];
let descriptorServer: http.Server;
let descriptorUrl: string;
let device: TinyDevice | undefined;
let core: TestCore | undefined;
let mosquitto: MosquittoHandle | undefined;

beforeAll(async () => {
  await ensureBuilt();
  // Stands in for wherever the descriptor is hosted (a NAS, Home Assistant's www folder, GitHub).
  descriptorServer = http.createServer((req, res) => {
    fetches.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' }).end(LAMP);
  });
  await new Promise<void>((resolve) => descriptorServer.listen(0, '127.0.0.1', resolve));
  descriptorUrl = `http://127.0.0.1:${(descriptorServer.address() as AddressInfo).port}/lamp.json`;
});

afterAll(async () => {
  descriptorServer.closeAllConnections();
  await new Promise<void>((resolve) => descriptorServer.close(() => resolve()));
});

afterEach(async () => {
  await device?.stop();
  await core?.cleanup();
  await mosquitto?.stop();
  device = undefined;
  core = undefined;
  mosquitto = undefined;
});

async function waitUntil(check: () => boolean, what: string, output: () => string, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}; device said:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The documented block for a plugin user, given to the device's login. */
function deviceAcl(): string {
  return aclFromDocs().replace('user weather\n', 'user desk-lamp\n');
}

/** The limits of the device, checked on everything it sent and received. */
function expectWithinDeviceLimits(trace: TraceEvent[], pluginId: string): TraceEvent[] {
  const invokes = trace.filter((event) => event.event === 'received' && event.topic === topics.invoke(pluginId));
  expect(trace.filter((event) => event.event === 'oversize')).toEqual([]);
  for (const invoke of invokes) expect(invoke.bytes).toBeLessThanOrEqual(256);
  // Its own packets fit its buffer too: the registration by reference, heartbeats, results.
  for (const sent of trace.filter((event) => event.event === 'sent')) expect(sent.bytes, JSON.stringify(sent)).toBeLessThanOrEqual(256);
  const publishes = trace.filter((event) => event.event === 'sent' && event.type === 3);
  expect(publishes.length).toBeGreaterThan(0);
  expect(publishes.filter((event) => event.qos !== 0)).toEqual([]);
  expect(trace.find((event) => event.event === 'connect')).toMatchObject({ keepalive: 15 });
  const subscriptions = trace.filter((event) => event.event === 'subscribe').map((event) => event.topic);
  // Nothing retained: not the Core status, not plugin statuses.
  expect(subscriptions.sort()).toEqual([topics.control(pluginId), topics.invoke(pluginId), topics.registered(pluginId)].sort());
  return invokes;
}

describe('a tiny device', () => {
  it.each(['embedded', 'mosquitto'] as const)(
    'registers by reference, is invoked and answers within its limits (%s broker)',
    async (broker) => {
      let login: { user: string; password: string };
      if (broker === 'embedded') {
        core = await startTestCore({ overrides: { liveness: { grace_sec: 2 } } });
        const created = await core.api<{ password: string }>('POST', '/api/credentials', { name: 'desk-lamp', role: 'plugin' });
        login = { user: 'desk-lamp', password: created.body.password };
      } else {
        mosquitto = await startMosquitto({ users: { 'homeclaw-core': 'core-secret', 'desk-lamp': 'lamp-secret' }, acl: deviceAcl() });
        core = await startTestCore({
          overrides: { liveness: { grace_sec: 2 }, broker: { url: mosquitto.url, username: 'homeclaw-core', password: 'core-secret' } },
        });
        login = { user: 'desk-lamp', password: 'lamp-secret' };
      }
      const port = broker === 'embedded' ? core.mqttPort! : mosquitto!.port;
      const fetchesBefore = fetches.length;
      const tiny = startTinyDevice({
        broker: '127.0.0.1',
        port,
        ...login,
        plugin_id: 'desk-lamp',
        client_id: 'homeclaw-plugin-desk-lamp',
        descriptor_url: descriptorUrl,
        keepalive: 15,
        heartbeat_sec: 1,
      });
      device = tiny;
      const registry = core.ctx.registry;
      await waitUntil(() => registry.get('desk-lamp')?.state === 'online', 'the registration', tiny.output);
      expect(registry.get('desk-lamp')?.descriptor).toMatchObject({ name: 'Desk lamp', type: 'mqtt' });
      expect(registry.get('desk-lamp')?.heartbeat_interval_sec).toBe(1);
      // The Core fetched the descriptor without any credential of its own.
      expect(fetches.length).toBeGreaterThan(fetchesBefore);
      for (const headers of fetches.slice(fetchesBefore)) {
        expect(headers['authorization']).toBeUndefined();
        expect(headers['cookie']).toBeUndefined();
      }

      const on = await core.ctx.dispatcher.invoke({ plugin_id: 'desk-lamp', capability_id: 'switch', parameters: { on: true }, context: CONVERSATION });
      expect(on, tiny.output()).toMatchObject({ success: true, text: 'The desk lamp is now on.' });
      const status = await core.ctx.dispatcher.invoke({ plugin_id: 'desk-lamp', capability_id: 'status', context: CONVERSATION });
      expect(status).toMatchObject({ success: true, text: 'The desk lamp is on.' });
      const bad = await core.ctx.dispatcher.invoke({ plugin_id: 'desk-lamp', capability_id: 'switch', parameters: { on: 'yes' } });
      expect(bad).toMatchObject({ success: false, error_code: 'invalid_params' }); // refused by the Core, nothing sent

      // QoS 0 heartbeats keep it online past its interval plus grace.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      expect(registry.get('desk-lamp')?.state).toBe('online');
      const invokes = expectWithinDeviceLimits(tiny.trace(), 'desk-lamp');
      expect(invokes).toHaveLength(2);
      expect(tiny.trace().some((event) => event.event === 'sent' && event.topic === topics.heartbeat('desk-lamp') && event.qos === 0)).toBe(true);
    },
    90_000,
  );

  it('registered once by an administrator over HTTP (type mqtt), only heartbeats; its credential claims the id', async () => {
    core = await startTestCore();
    const created = await core.api<{ password: string }>('POST', '/api/credentials', { name: 'hall-lamp', role: 'plugin' });
    // A capability that wants the conversation context gets it, so its request outgrows the device.
    const descriptor = JSON.parse(LAMP.replace(/desk-lamp/g, 'hall-lamp').replace(/desk lamp/gi, 'hall lamp')) as { capabilities: Record<string, unknown>[] };
    descriptor.capabilities[1]!['wants_context'] = true;
    const registered = await core.api<{ plugin_id: string; change: string }>('POST', '/api/plugins/register', {
      ...descriptor,
      type: 'mqtt',
      heartbeat_interval_sec: 1,
    });
    expect(registered).toMatchObject({ status: 201, body: { plugin_id: 'hall-lamp', change: 'created' } });
    expect(core.ctx.registry.get('hall-lamp')).toMatchObject({
      state: 'offline',
      state_reason: "waiting for the device's first heartbeat",
      owner: 'mqtt:unclaimed',
    });
    const before = await core.ctx.dispatcher.invoke({ plugin_id: 'hall-lamp', capability_id: 'status' });
    expect(before).toMatchObject({ success: false, error_code: 'offline' });

    const tiny = startTinyDevice({
      broker: '127.0.0.1',
      port: core.mqttPort!,
      user: 'hall-lamp',
      password: created.body.password,
      plugin_id: 'hall-lamp',
      client_id: 'homeclaw-plugin-hall-lamp',
      descriptor_url: null,
      keepalive: 15,
      heartbeat_sec: 1,
    });
    device = tiny;
    await waitUntil(() => core!.ctx.registry.get('hall-lamp')?.state === 'online', 'the first heartbeat', tiny.output);
    expect(core.ctx.registry.get('hall-lamp')?.owner).toBe('mqtt:user:hall-lamp');
    expect(tiny.trace().some((event) => event.event === 'sent' && event.topic === topics.register())).toBe(false);

    const on = await core.ctx.dispatcher.invoke({ plugin_id: 'hall-lamp', capability_id: 'switch', parameters: { on: true }, context: CONVERSATION });
    expect(on).toMatchObject({ success: true, text: 'The desk lamp is now on.' }); // the template's own words

    // wants_context: the request carries the conversation and no longer fits 256 bytes. The device's
    // buffer check catches it (as PubSubClient would drop it): the call times out. This is the check
    // that fails the test above if the Core ever sends a short request over 256 bytes.
    const asked = await core.ctx.dispatcher.invoke({ plugin_id: 'hall-lamp', capability_id: 'status', context: CONVERSATION, timeout_sec: 2 });
    expect(asked).toMatchObject({ success: false, error_code: 'timeout' });
    const oversize = tiny.trace().filter((event) => event.event === 'oversize');
    expect(oversize).toHaveLength(1);
    expect(oversize[0]).toMatchObject({ topic: topics.invoke('hall-lamp') });
    expect(oversize[0]!.bytes).toBeGreaterThan(256);
  }, 60_000);
});

// Attack (or accident): the path to a plugin disappears mid-call and its caller is left waiting for
// the whole deadline: a plugin killed without a will stayed online although the embedded broker saw
// its connection close; calls through an external broker waited out their deadline when the Core lost
// that broker; an oversized request vanished in the broker; and a huge timeout_sec overflowed Node's
// timer into an instant timeout. Defences: each ends at once with a clear error (or, for the timeout,
// is capped at 24 h).
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import mqtt from 'mqtt';
import { topics } from '../../src/protocol/topics.js';
import type { PluginResult } from '../../src/protocol/types.js';
import { ensureBuilt } from '../helpers/build.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { connectTestClient } from '../helpers/mqtt-client.js';
import { startChildPlugin, type ChildPlugin } from '../fixtures/sdk/child-plugin.js';

const fixtures = resolve(import.meta.dirname, '..', 'fixtures', 'faults');
/** Every call here has this deadline; ending "at once" means long before it. */
const DEADLINE_SEC = 20;
const AT_ONCE_MS = 8_000;

async function waitUntil(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Starts a call to a silent plugin and resolves once the plugin has received it. */
async function callSilent(core: TestCore, plugin: ChildPlugin, id: string): Promise<{ result: Promise<PluginResult>; startedAt: number }> {
  const before = plugin.stdout().split('"invoked"').length;
  const startedAt = Date.now();
  const result = core.ctx.dispatcher.invoke({ plugin_id: id, capability_id: 'wait', parameters: {}, timeout_sec: DEADLINE_SEC });
  await waitUntil(() => plugin.stdout().split('"invoked"').length > before);
  return { result, startedAt };
}

beforeAll(() => ensureBuilt(), 180_000);

describe('a plugin whose connection closes without a will (embedded broker)', () => {
  let core: TestCore;
  beforeAll(async () => {
    core = await startTestCore();
  });
  afterAll(async () => {
    await core?.cleanup();
  });

  it('killed hard: its in-flight call fails at once and it is marked offline', async () => {
    const plugin = startChildPlugin(process.execPath, [join(fixtures, 'silent-plugin.mjs'), core.mqttUrl, 'killed']);
    await plugin.registered;
    const { result, startedAt } = await callSilent(core, plugin, 'killed');
    await plugin.stop('SIGKILL');
    const ended = await result;
    expect(Date.now() - startedAt).toBeLessThan(AT_ONCE_MS);
    expect(ended).toMatchObject({ success: false, error_code: 'offline' });
    expect(ended.error).toMatch(/killed.*(connection|offline)/);
    expect(core.ctx.registry.get('killed')?.state).toBe('offline');
  });

  it('socket destroyed: the same, even while a monitor subscribed to everything stays connected', async () => {
    const monitor = await connectTestClient(core.mqttUrl);
    await monitor.subscribe('homeclaw/#');
    const client = await mqtt.connectAsync(core.mqttUrl, { protocolVersion: 4, clientId: 'destroyed-1', reconnectPeriod: 0 });
    await client.subscribeAsync([topics.invoke('destroyed'), topics.registered('destroyed')], { qos: 1 });
    const acked = new Promise((r) => client.once('message', r));
    await client.publishAsync(
      topics.register(),
      JSON.stringify({ id: 'destroyed', name: 'D', description: 'D', epoch: 1, capabilities: [{ id: 'wait', description: 'w' }] }),
      { qos: 1 },
    );
    await acked;
    const invoked = new Promise((r) => client.on('message', (topic) => topic === topics.invoke('destroyed') && r(topic)));
    const startedAt = Date.now();
    const result = core.ctx.dispatcher.invoke({ plugin_id: 'destroyed', capability_id: 'wait', parameters: {}, timeout_sec: DEADLINE_SEC });
    await invoked;
    (client.stream as unknown as { destroy(): void }).destroy();
    const ended = await result;
    expect(Date.now() - startedAt).toBeLessThan(AT_ONCE_MS);
    expect(ended).toMatchObject({ success: false, error_code: 'offline' });
    expect(core.ctx.registry.get('destroyed')?.state).toBe('offline');
    client.end(true);
    await monitor.end(true);
  });

  it('a host serving several plugins through a wildcard takes them all offline when it dies', async () => {
    const host = await mqtt.connectAsync(core.mqttUrl, { protocolVersion: 4, clientId: 'host-1', reconnectPeriod: 0 });
    await host.subscribeAsync([`${topics.invoke('')}+`, topics.registered('hosted-a'), topics.registered('hosted-b')], { qos: 1 });
    for (const id of ['hosted-a', 'hosted-b']) {
      const acked = new Promise((r) => host.once('message', r));
      await host.publishAsync(
        topics.register(),
        JSON.stringify({ id, name: id, description: id, epoch: 1, capabilities: [{ id: 'wait', description: 'w' }] }),
        { qos: 1 },
      );
      await acked;
    }
    const calls = ['hosted-a', 'hosted-b'].map((id) =>
      core.ctx.dispatcher.invoke({ plugin_id: id, capability_id: 'wait', parameters: {}, timeout_sec: DEADLINE_SEC }),
    );
    await new Promise((r) => setTimeout(r, 200));
    (host.stream as unknown as { destroy(): void }).destroy();
    for (const result of await Promise.all(calls)) expect(result).toMatchObject({ success: false, error_code: 'offline' });
    expect(core.ctx.registry.get('hosted-a')?.state).toBe('offline');
    expect(core.ctx.registry.get('hosted-b')?.state).toBe('offline');
    host.end(true);
  });

  it('a newer session on another connection keeps the plugin online when the old one closes', async () => {
    const { password } = await core.ctx.credentials.add('twin', 'plugin');
    const connectAs = (clientId: string) => mqtt.connectAsync(core.mqttUrl, { protocolVersion: 4, clientId, username: 'twin', password, reconnectPeriod: 0 });
    const register = async (client: mqtt.MqttClient, epoch: number): Promise<void> => {
      await client.subscribeAsync([topics.invoke('twin'), topics.registered('twin')], { qos: 1 });
      const acked = new Promise((r) => client.once('message', r));
      await client.publishAsync(
        topics.register(),
        JSON.stringify({ id: 'twin', name: 'T', description: 'T', epoch, capabilities: [{ id: 'echo', description: 'e' }] }),
        { qos: 1 },
      );
      await acked;
    };
    const old = await connectAs('twin-old');
    await register(old, 1);
    const fresh = await connectAs('twin-new');
    await register(fresh, 2);
    fresh.on('message', (topic, payload) => {
      if (topic !== topics.invoke('twin')) return;
      const request = JSON.parse(payload.toString()) as { request_id: string };
      fresh
        .publishAsync(
          topics.result(request.request_id),
          JSON.stringify({ request_id: request.request_id, plugin_id: 'twin', success: true, text: 'from the new session' }),
          { qos: 1 },
        )
        .catch(() => undefined);
    });
    (old.stream as unknown as { destroy(): void }).destroy();
    await new Promise((r) => setTimeout(r, 500));
    expect(core.ctx.registry.get('twin')?.state).toBe('online');
    const result = await core.ctx.dispatcher.invoke({ plugin_id: 'twin', capability_id: 'echo', parameters: {}, timeout_sec: DEADLINE_SEC });
    expect(result).toMatchObject({ success: true, text: 'from the new session' });
    await fresh.endAsync(false);
    old.end(true);
  });
});

describe('an external broker', () => {
  let mosquitto: MosquittoHandle;
  let core: TestCore;
  beforeAll(async () => {
    mosquitto = await startMosquitto({ extraConfig: 'message_size_limit 8192' });
    core = await startTestCore({ overrides: { broker: { url: mosquitto.url, max_payload_bytes: 8192 } } });
  });
  afterAll(async () => {
    await core?.cleanup();
    await mosquitto?.stop();
  });

  it('refuses a request larger than the payload limit before sending it, with a clear error', async () => {
    const plugin = startChildPlugin(process.execPath, [join(fixtures, 'silent-plugin.mjs'), mosquitto.url, 'big']);
    await plugin.registered;
    try {
      const startedAt = Date.now();
      const result = await core.ctx.dispatcher.invoke({
        plugin_id: 'big',
        capability_id: 'wait',
        parameters: { text: 'x'.repeat(20_000) },
        timeout_sec: DEADLINE_SEC,
      });
      expect(Date.now() - startedAt).toBeLessThan(AT_ONCE_MS);
      expect(result).toMatchObject({ success: false, error_code: 'invalid_params' });
      expect(result.error).toMatch(/request .* is \d+ bytes, more than the broker payload limit of 8192 bytes \(broker\.max_payload_bytes\); nothing was sent/);
      expect(plugin.stdout()).not.toMatch(/"invoked"/);
      // The Core is still connected: a normal call reaches the plugin.
      const { result: small } = await callSilent(core, plugin, 'big');
      void small;
    } finally {
      await plugin.stop('SIGKILL');
    }
  });

  it('fails in-flight calls at once with "broker connection lost" when the broker goes away', async () => {
    const plugin = startChildPlugin(process.execPath, [join(fixtures, 'silent-plugin.mjs'), mosquitto.url, 'remote']);
    await plugin.registered;
    try {
      const { result, startedAt } = await callSilent(core, plugin, 'remote');
      await mosquitto.kill();
      const ended = await result;
      expect(Date.now() - startedAt).toBeLessThan(AT_ONCE_MS);
      expect(ended).toMatchObject({ success: false });
      expect(ended.error).toMatch(/broker connection lost/);
    } finally {
      await plugin.stop('SIGKILL');
      await mosquitto.start();
    }
  });
});

describe('timeout_sec beyond what a timer can hold', () => {
  let core: TestCore;
  let server: Server;
  beforeAll(async () => {
    core = await startTestCore();
    server = createServer((_request, response) => {
      setTimeout(() => response.end(JSON.stringify({ success: true, text: 'slow but fine' })), 300);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
  });
  afterAll(async () => {
    server?.close();
    await core?.cleanup();
  });

  it('is capped at 24 h in the dispatcher instead of timing out at once', async () => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const registered = await core.api('POST', '/api/plugins/register', {
      id: 'patient',
      name: 'Patient',
      description: 'Answers slowly.',
      type: 'http',
      health_check_url: `${base}/health`,
      config: { base_url: base, timeout_sec: 1e10 },
      capabilities: [{ id: 'run', name: 'Run', description: 'Run', timeout_sec: 1e12, parameters: [] }],
    });
    expect(registered.status).toBe(201);
    const viaDescriptor = await core.ctx.dispatcher.invoke({ plugin_id: 'patient', capability_id: 'run', parameters: {} });
    expect(viaDescriptor).toMatchObject({ success: true, text: 'slow but fine' });
    const viaOption = await core.ctx.dispatcher.invoke({ plugin_id: 'patient', capability_id: 'run', parameters: {}, timeout_sec: 5e9 });
    expect(viaOption).toMatchObject({ success: true, text: 'slow but fine' });
  });

  it('the SDK does not abort a handler whose deadline is further away than a timer can hold', async () => {
    const plugin = startChildPlugin(process.execPath, [join(fixtures, 'slow-plugin.mjs'), core.mqttUrl, 'slowsdk']);
    await plugin.registered;
    const client = await connectTestClient(core.mqttUrl);
    try {
      const request_id = randomUUID();
      await client.subscribe(topics.result(request_id));
      const answer = client.waitFor(topics.result(request_id), () => true, 10_000);
      await client.publish(topics.invoke('slowsdk'), {
        request_id,
        plugin_id: 'slowsdk',
        capability_id: 'slow',
        parameters: { ms: 300 },
        deadline: Date.now() + 1e12,
      });
      expect((await answer).json<PluginResult>()).toMatchObject({ success: true, text: 'done' });
    } finally {
      await client.end(true);
      await plugin.stop('SIGTERM');
    }
  });
});

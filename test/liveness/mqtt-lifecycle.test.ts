// The Core over MQTT end to end: a real Core (embedded Aedes, registry, dispatcher, HTTP API) and real
// mqtt.js clients acting as plugins.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { PluginRequest, PluginResult } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';

function descriptor(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    name: `Plugin ${id}`,
    description: `Test plugin ${id}`,
    capabilities: [
      {
        id: 'add',
        name: 'Add',
        description: 'Adds two numbers',
        parameters: [
          { name: 'a', type: 'number', required: true },
          { name: 'b', type: 'number', required: true },
        ],
      },
      { id: 'wait', name: 'Wait', description: 'Never answers on its own', parameters: [], timeout_sec: 0.6 },
    ],
    ...extra,
  };
}

interface PluginsBody {
  plugins: { id: string; state: string }[];
}

/** A hand-written MQTT plugin: registers, answers `add`, ignores `wait`. */
async function rawPlugin(core: TestCore, id: string, options: { epoch?: number; answer?: boolean; extra?: Record<string, unknown> } = {}) {
  const epoch = options.epoch ?? Date.now();
  const client = await connectTestClient(core.mqttUrl, {
    clientId: `raw-${id}`,
    will: { topic: topics.status(id), payload: Buffer.from(JSON.stringify({ state: 'offline', epoch })), qos: 1, retain: true },
  });
  await client.subscribe(topics.registered(id));
  await client.subscribe(topics.invoke(id));
  await client.subscribe(topics.control(id));
  const invocations: PluginRequest[] = [];
  client.client.on('message', (topic, payload) => {
    if (topic !== topics.invoke(id)) return;
    const request = JSON.parse(payload.toString()) as PluginRequest;
    invocations.push(request);
    if (options.answer === false || request.capability_id !== 'add') return;
    const { a, b } = request.parameters as { a: number; b: number };
    void client.publish(topics.result(request.request_id), { request_id: request.request_id, plugin_id: id, success: true, text: String(a + b), data: a + b });
  });
  await client.publish(topics.register(), { ...descriptor(id, options.extra), epoch, heartbeat_interval_sec: 30 });
  const ack = await client.waitFor(topics.registered(id));
  return { client, epoch, ack: ack.json<{ ok: boolean; errors?: { path: string; message: string }[] }>(), invocations };
}

describe('Core over MQTT', () => {
  let core: TestCore;
  let observer: TestClient;

  beforeAll(async () => {
    core = await startTestCore({
      overrides: { liveness: { grace_sec: 0.5 }, dispatch: { default_timeout_sec: 5 } },
    });
    observer = await connectTestClient(core.mqttUrl, { clientId: 'observer' });
    await observer.subscribe('homeclaw/#');
  });

  afterAll(async () => {
    await observer?.end(true);
    await core?.cleanup();
  });

  it('publishes a retained Core birth', async () => {
    const late = await connectTestClient(core.mqttUrl, { clientId: 'late-subscriber' });
    await late.subscribe(topics.coreStatus());
    const birth = await late.waitFor(topics.coreStatus());
    expect(birth.retain).toBe(true);
    expect(birth.json()).toMatchObject({ online: true });
    await late.end();
  });

  it('registers a plugin, acks it and invokes it with a correlated result', async () => {
    const { client, ack, invocations } = await rawPlugin(core, 'calc');
    expect(ack).toEqual({ plugin_id: 'calc', ok: true });
    const list = await core.api<PluginsBody>('GET', '/api/plugins');
    expect(list.body.plugins.find((p) => p.id === 'calc')?.state).toBe('online');
    const res = await core.api<PluginResult>('POST', '/v1/plugins/calc/tools/add/run', { a: 2, b: 40 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, text: '42', data: 42, plugin_id: 'calc' });
    expect(invocations.at(-1)).toMatchObject({ capability_id: 'add', parameters: { a: 2, b: 40 } });
    expect(invocations.at(-1)?.deadline).toBeGreaterThan(Date.now());
    // Dashboards see both on the events topics; parameters (possibly personal) are not in the feed.
    const registered = await observer.waitFor(topics.events('registry'), (m) => m.json<{ plugin_id?: string }>().plugin_id === 'calc');
    expect(registered.json()).toMatchObject({ type: 'plugin.registered', state: 'online' });
    const finished = await observer.waitFor(topics.events('invocation'), (m) => m.json<{ request_id?: string }>().request_id === res.body.request_id);
    expect(finished.json()).toMatchObject({ type: 'invocation.finished', plugin_id: 'calc', capability_id: 'add', success: true });
    expect(finished.json()).not.toHaveProperty('parameters');
    await client.end(true);
  });

  describe('bad input: a clear error on the reply topic, nothing changed', () => {
    const oversized = JSON.stringify({ ...descriptor('big'), epoch: 1, description: 'x'.repeat(300_000) });
    const cases: { name: string; topic: () => string; payload: string; replyOn: string; error: RegExp; clientId?: string }[] = [
      { name: 'malformed JSON', topic: topics.register, payload: '{"id": "oops", ', replyOn: topics.registeredInvalid(), error: /not valid JSON/i },
      {
        name: 'descriptor missing required fields',
        topic: topics.register,
        payload: JSON.stringify({ id: 'incomplete', epoch: 1, capabilities: [{ id: 'x', parameters: [{ name: 'p', type: 'colour' }] }] }),
        replyOn: topics.registered('incomplete'),
        error: /name|description/,
      },
      {
        name: 'id with a slash',
        topic: topics.register,
        payload: JSON.stringify({ ...descriptor('a/b'), epoch: 1 }),
        replyOn: topics.registeredInvalid(),
        error: /id/,
      },
      { name: 'id +', topic: topics.register, payload: JSON.stringify({ ...descriptor('+'), epoch: 1 }), replyOn: topics.registeredInvalid(), error: /id/ },
      { name: 'id #', topic: topics.register, payload: JSON.stringify({ ...descriptor('#'), epoch: 1 }), replyOn: topics.registeredInvalid(), error: /id/ },
      { name: 'empty id', topic: topics.register, payload: JSON.stringify({ ...descriptor(''), epoch: 1 }), replyOn: topics.registeredInvalid(), error: /id/ },
      {
        name: '200-character id',
        topic: topics.register,
        payload: JSON.stringify({ ...descriptor('a'.repeat(200)), epoch: 1 }),
        replyOn: topics.registeredInvalid(),
        error: /id/,
      },
      { name: 'oversized payload', topic: topics.register, payload: oversized, replyOn: topics.registeredInvalid(), error: /bytes/ },
      {
        name: 'unregister of an id owned by another client',
        topic: topics.unregister,
        payload: JSON.stringify({ plugin_id: 'owned' }),
        replyOn: topics.registered('owned'),
        error: /another client/,
        clientId: 'intruder',
      },
      {
        name: 'register of an id owned by another client',
        topic: topics.register,
        payload: JSON.stringify({ ...descriptor('owned'), epoch: 1 }),
        replyOn: topics.registered('owned'),
        error: /another client/,
        clientId: 'intruder2',
      },
    ];

    it.each(cases)('$name', async ({ topic, payload, replyOn, error, clientId }) => {
      const owner = await rawPlugin(core, 'owned');
      expect(owner.ack.ok).toBe(true);
      const before = await core.api<PluginsBody>('GET', '/api/plugins');
      const sender = await connectTestClient(core.mqttUrl, { clientId: clientId ?? `sender-${Math.random().toString(36).slice(2)}` });
      await sender.subscribe(replyOn);
      await sender.publish(topic(), payload);
      const reply = await sender.waitFor(replyOn, (m) => m.json<{ ok: boolean }>().ok === false);
      const ack = reply.json<{ ok: boolean; errors: { path: string; message: string }[] }>();
      expect(ack.errors.length).toBeGreaterThan(0);
      expect(ack.errors.map((e) => `${e.path} ${e.message}`).join('\n')).toMatch(error);
      const after = await core.api<PluginsBody>('GET', '/api/plugins');
      expect(after.body.plugins).toEqual(before.body.plugins);
      await sender.end(true);
      await owner.client.end(true);
    });

    it('lists every error of a bad descriptor, each with its path', async () => {
      const sender = await connectTestClient(core.mqttUrl, { clientId: 'multi-error' });
      await sender.subscribe(topics.registered('multi'));
      await sender.publish(topics.register(), {
        id: 'multi',
        epoch: 1,
        capabilities: [{ id: 'c', name: 'C', description: 'd', parameters: [{ name: 'p', type: 'colour' }] }],
      });
      const ack = (await sender.waitFor(topics.registered('multi'))).json<{ ok: boolean; errors: { path: string }[] }>();
      const paths = ack.errors.map((e) => e.path);
      expect(paths).toEqual(expect.arrayContaining(['/name', '/description']));
      expect(paths.some((p) => p.startsWith('/capabilities/0/parameters/0'))).toBe(true);
      await sender.end(true);
    });

    it('rejects invocations of unknown plugins and capabilities and wrong parameter types without sending anything', async () => {
      const { client, invocations } = await rawPlugin(core, 'strict');
      const unknownPlugin = await core.api<PluginResult>('POST', '/v1/plugins/nope/tools/add/run', { a: 1, b: 2 });
      expect(unknownPlugin.status).toBe(404);
      expect(unknownPlugin.body).toMatchObject({ success: false, error_code: 'not_found' });
      const unknownCap = await core.api<PluginResult>('POST', '/v1/plugins/strict/tools/divide/run', {});
      expect(unknownCap.status).toBe(404);
      expect(unknownCap.body.error).toMatch(/no capability "divide".*add, wait/);
      const wrongType = await core.api<PluginResult>('POST', '/v1/plugins/strict/tools/add/run', { a: 'one', b: 2 });
      expect(wrongType.status).toBe(400);
      expect(wrongType.body).toMatchObject({ success: false, error_code: 'invalid_params' });
      expect(wrongType.body.error).toMatch(/a/);
      const missing = await core.api<PluginResult>('POST', '/v1/plugins/strict/tools/add/run', { a: 1 });
      expect(missing.body.error).toMatch(/missing required parameter "b"/);
      expect(invocations).toHaveLength(0);
      await client.end(true);
    });

    it('drops a result for an unknown request id and asks an unknown heartbeating plugin to re-register', async () => {
      const stray = await connectTestClient(core.mqttUrl, { clientId: 'stray' });
      await stray.subscribe(topics.control('ghost'));
      const before = (await core.api<{ mqtt: { dropped_unknown: number } }>('GET', '/api/status')).body.mqtt.dropped_unknown;
      await stray.publish(topics.result('no-such-request'), { request_id: 'no-such-request', plugin_id: 'ghost', success: true, text: 'hi' });
      await stray.publish(topics.heartbeat('ghost'), { epoch: 1, seq: 1, ts: Date.now() }, { qos: 0 });
      const control = await stray.waitFor(topics.control('ghost'));
      expect(control.json()).toMatchObject({ cmd: 'reregister' });
      const after = (await core.api<{ mqtt: { dropped_unknown: number } }>('GET', '/api/status')).body.mqtt.dropped_unknown;
      expect(after).toBe(before + 1);
      expect((await core.api<PluginsBody>('GET', '/api/plugins')).body.plugins.some((p) => p.id === 'ghost')).toBe(false);
      await stray.end(true);
    });
  });

  it('ends every invocation exactly once: timeout, duplicate and foreign results dropped', async () => {
    const { client, invocations } = await rawPlugin(core, 'once', { answer: false });
    const started = Date.now();
    const timedOut = await core.api<PluginResult>('POST', '/v1/plugins/once/tools/wait/run', {});
    expect(timedOut.status).toBe(504);
    expect(timedOut.body).toMatchObject({ success: false, error_code: 'timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(550);
    expect(Date.now() - started).toBeLessThan(3000);

    const pending = core.api<PluginResult>('POST', '/v1/plugins/once/tools/add/run', { a: 1, b: 1 });
    await expect.poll(() => invocations.length).toBe(2);
    const request = invocations[1] as PluginRequest;
    const intruder = await connectTestClient(core.mqttUrl, { clientId: 'intruder-result' });
    await intruder.publish(topics.result(request.request_id), { request_id: request.request_id, plugin_id: 'once', success: true, text: 'forged' });
    await new Promise((r) => setTimeout(r, 100));
    await client.publish(topics.result(request.request_id), { request_id: request.request_id, plugin_id: 'once', success: true, text: 'real' });
    await client.publish(topics.result(request.request_id), { request_id: request.request_id, plugin_id: 'once', success: true, text: 'duplicate' });
    const res = await pending;
    expect(res.body).toMatchObject({ success: true, text: 'real' });
    await expect
      .poll(async () => (await core.api<{ mqtt: { rejected_foreign: number; dropped_late: number } }>('GET', '/api/status')).body.mqtt)
      .toMatchObject({ rejected_foreign: 1, dropped_late: 1 });
    await intruder.end(true);
    await client.end(true);
  });

  it('fails an in-flight call at once when the plugin goes offline, and ignores a stale will', async () => {
    const { client, epoch, invocations } = await rawPlugin(core, 'flaky', { answer: false, extra: { config: { timeout_sec: 20 } } });
    // A will from an earlier connection (older epoch) is not news.
    await observer.publish(topics.status('flaky'), { state: 'offline', epoch: epoch - 1000 });
    await new Promise((r) => setTimeout(r, 200));
    expect((await core.api<{ state: string }>('GET', '/api/plugins/flaky')).body.state).toBe('online');

    const pending = core.api<PluginResult>('POST', '/v1/plugins/flaky/tools/add/run', { a: 1, b: 2 });
    await expect.poll(() => invocations.length).toBe(1);
    const started = Date.now();
    client.client.stream.destroy(); // an unexpected disconnect: the broker publishes the will
    const res = await pending;
    expect(res.body).toMatchObject({ success: false, error_code: 'offline' });
    expect(Date.now() - started).toBeLessThan(3000);
    expect((await core.api<{ state: string }>('GET', '/api/plugins/flaky')).body.state).toBe('offline');
    const offlineCall = await core.api<PluginResult>('POST', '/v1/plugins/flaky/tools/add/run', { a: 1, b: 2 });
    expect(offlineCall.status).toBe(503);
    expect(offlineCall.body.error).toMatch(/offline/);
    await client.end(true);
  });

  it('marks a silent plugin stale and brings it back on its next heartbeat', async () => {
    const epoch = Date.now();
    const plugin = await connectTestClient(core.mqttUrl, { clientId: 'raw-sleepy' });
    await plugin.subscribe(topics.registered('sleepy'));
    await plugin.publish(topics.register(), { ...descriptor('sleepy'), epoch, heartbeat_interval_sec: 0.5 });
    await plugin.waitFor(topics.registered('sleepy'));
    await expect.poll(async () => (await core.api<{ state: string }>('GET', '/api/plugins/sleepy')).body.state, { timeout: 5000 }).toBe('stale');
    const call = await core.api<PluginResult>('POST', '/v1/plugins/sleepy/tools/add/run', { a: 1, b: 2 });
    expect(call.body).toMatchObject({ success: false, error_code: 'stale' });
    await plugin.publish(topics.heartbeat('sleepy'), { epoch, seq: 1, ts: Date.now() }, { qos: 0 });
    await expect.poll(async () => (await core.api<{ state: string }>('GET', '/api/plugins/sleepy')).body.state).toBe('online');
    await plugin.end(true);
  });

  it('answers "busy" at once beyond the queue limit of a single-concurrency device', async () => {
    const { client, invocations } = await rawPlugin(core, 'tiny', { answer: false, extra: { config: { max_concurrency: 1, queue_limit: 1, timeout_sec: 3 } } });
    const first = core.api<PluginResult>('POST', '/v1/plugins/tiny/tools/add/run', { a: 1, b: 1 });
    const second = core.api<PluginResult>('POST', '/v1/plugins/tiny/tools/add/run', { a: 2, b: 2 });
    await expect.poll(() => invocations.length).toBe(1);
    const started = Date.now();
    const third = await core.api<PluginResult>('POST', '/v1/plugins/tiny/tools/add/run', { a: 3, b: 3 });
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ success: false, error_code: 'busy' });
    expect(Date.now() - started).toBeLessThan(1000);
    // Only one call at a time reached the device.
    expect(invocations).toHaveLength(1);
    const req = invocations[0] as PluginRequest;
    await client.publish(topics.result(req.request_id), { request_id: req.request_id, plugin_id: 'tiny', success: true, text: 'done' });
    expect((await first).body.text).toBe('done');
    await expect.poll(() => invocations.length).toBe(2);
    const req2 = invocations[1] as PluginRequest;
    await client.publish(topics.result(req2.request_id), { request_id: req2.request_id, plugin_id: 'tiny', success: false, error: 'device says no' });
    expect((await second).body).toMatchObject({ success: false, error: 'device says no', error_code: 'plugin_error' });
    await client.end(true);
  });
});

describe('Core restart', () => {
  it('keeps registered plugins across a restart and routes them again after re-registration', async () => {
    const first = await startTestCore();
    const { client } = await rawPlugin(first, 'durable');
    await client.end(true);
    await first.cleanup({ keepData: true });

    const second = await startTestCore({ dataDir: first.dataDir });
    const listed = await second.api<{ state: string; description: string }>('GET', '/api/plugins/durable');
    expect(listed.status).toBe(200);
    expect(listed.body.description).toBe('Test plugin durable');
    expect(listed.body.state).toBe('offline');
    const again = await rawPlugin(second, 'durable');
    expect(again.ack.ok).toBe(true);
    const res = await second.api<PluginResult>('POST', '/v1/plugins/durable/tools/add/run', { a: 20, b: 22 });
    expect(res.body.text).toBe('42');
    await again.client.end(true);
    await second.cleanup();
  });
});

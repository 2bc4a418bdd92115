// The SDK in process against a real Aedes broker and a fake Core speaking MQTT.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { PluginStatusMessage, RegisterMessage } from '../../src/protocol/types.js';
import { validatePayload } from '../../src/protocol/validate.js';
import {
  connectPlugin,
  PluginRegistrationError,
  silentSdkLogger,
  type ConnectedPlugin,
  type ConnectPluginOptions,
  type PluginDescriptorInput,
} from '../../src/sdk/index.js';
import { startTestBroker, type TestBroker } from '../fixtures/sdk/broker.js';
import { FakeCore } from '../helpers/fake-core.js';

let broker: TestBroker;
let core: FakeCore;
const plugins: ConnectedPlugin[] = [];
let nextId = 0;

beforeAll(async () => {
  broker = await startTestBroker();
  core = await FakeCore.start(broker.url);
});

afterEach(async () => {
  await Promise.all(plugins.splice(0).map((p) => p.close()));
});

afterAll(async () => {
  await core?.close();
  await broker?.close();
});

function descriptor(id: string, config: PluginDescriptorInput['config'] = {}): PluginDescriptorInput {
  return {
    id,
    name: 'Test weather',
    description: 'Weather for tests',
    examples: ['weather in Paris'],
    capabilities: [
      {
        id: 'forecast',
        name: 'Forecast',
        description: 'Forecast for a city',
        parameters: [
          { name: 'city', type: 'string', description: 'City' },
          { name: 'days', type: 'integer', required: false, description: 'Days ahead' },
        ],
      },
      { id: 'boom', description: 'Always fails', parameters: [] },
      { id: 'slow', description: 'Takes its time', parameters: [{ name: 'ms', type: 'integer' }] },
    ],
    config,
  };
}

function uniqueId(): string {
  return `sdk-test-${process.pid}-${nextId++}`;
}

async function connect(overrides: Partial<ConnectPluginOptions> = {}): Promise<ConnectedPlugin> {
  const id = overrides.descriptor?.id ?? uniqueId();
  const plugin = await connectPlugin({
    url: broker.url,
    descriptor: descriptor(id),
    handlers: {
      forecast: ({ city, days }) => ({ text: `${String(city)}: sunny`, data: { city, days: days ?? 1 } }),
      boom: () => {
        throw new Error('the weather station is on fire');
      },
      slow: async ({ ms }, ctx) => {
        await ctx.progress('started');
        await new Promise((resolve) => setTimeout(resolve, Number(ms)));
        return `slept ${String(ms)}`;
      },
    },
    heartbeat_interval_sec: 0.2,
    reconnect_period_ms: 100,
    reconnect_max_ms: 400,
    log: silentSdkLogger(),
    startup_timeout_ms: 5000,
    register_timeout_ms: 1000,
    ...overrides,
  });
  plugins.push(plugin);
  return plugin;
}

async function waitUntil(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('registration', () => {
  it('registers the canonical descriptor with epoch and heartbeat interval, after an online status', async () => {
    const plugin = await connect();
    const registration = core.registrations(plugin.pluginId).at(-1) as RegisterMessage;
    expect(validatePayload('register', registration).ok).toBe(true);
    expect(registration).toMatchObject({
      id: plugin.pluginId,
      name: 'Test weather',
      type: 'mqtt',
      epoch: plugin.epoch,
      heartbeat_interval_sec: 0.2,
      examples: ['weather in Paris'],
    });
    expect(registration['source']).toBeUndefined();
    const forecast = (registration['capabilities'] as { id: string; parameters: { name: string; required: boolean }[] }[])[0]!;
    expect(forecast.parameters.map((p) => [p.name, p.required])).toEqual([
      ['city', true],
      ['days', false],
    ]);
    const status = core.statuses(plugin.pluginId);
    expect(status[0]).toMatchObject({ state: 'online', epoch: plugin.epoch });
    expect(plugin.clientId).toBe(`homeclaw-plugin-${plugin.pluginId}`);
    expect(plugin.stats().registrations).toBe(1);
  });

  it('rejects connectPlugin with every error when the Core refuses the registration', async () => {
    const id = uniqueId();
    core.setAckPolicy(() => ({
      plugin_id: id,
      ok: false,
      errors: [
        { path: '/capabilities/0/id', message: 'id already owned by another client' },
        { path: '/name', message: 'too long' },
      ],
    }));
    try {
      const error = await connect({ descriptor: descriptor(id) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PluginRegistrationError);
      expect((error as PluginRegistrationError).errors).toHaveLength(2);
      expect(String((error as Error).message)).toContain('id already owned by another client');
      expect(String((error as Error).message)).toContain('/name: too long');
    } finally {
      core.setAckPolicy((m) => ({ plugin_id: String(m['id']), ok: true }));
    }
  });

  it('recognises its own rejection on registered/_invalid by client id and ignores others', async () => {
    const id = uniqueId();
    const clientId = `custom-${id}`;
    core.setAckPolicy(() => ({ plugin_id: null, ok: false, client_id: clientId, errors: [{ path: '/id', message: 'bad id' }] }));
    try {
      const error = await connect({ descriptor: descriptor(id), clientId }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PluginRegistrationError);
      expect((error as PluginRegistrationError).errors).toEqual([{ path: '/id', message: 'bad id' }]);
    } finally {
      core.setAckPolicy((m) => ({ plugin_id: String(m['id']), ok: true }));
    }
    // Someone else's rejection does not disturb a registering plugin.
    core.setAckPolicy((m) => ({ plugin_id: String(m['id']), ok: true }));
    const other = await connect();
    await core.publishRaw(
      topics.registeredInvalid(),
      JSON.stringify({ plugin_id: null, ok: false, client_id: 'someone-else', errors: [{ path: '', message: 'x' }] }),
    );
    expect(other.connected).toBe(true);
  });

  it('times out when no Core answers', async () => {
    const id = uniqueId();
    core.setAckPolicy(() => ({ plugin_id: 'nobody-listens-here', ok: true }));
    try {
      const started = Date.now();
      const error = await connect({ descriptor: descriptor(id), startup_timeout_ms: 600 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PluginRegistrationError);
      expect(String((error as Error).message)).toMatch(/no registration ack/);
      expect(Date.now() - started).toBeLessThan(3000);
    } finally {
      core.setAckPolicy((m) => ({ plugin_id: String(m['id']), ok: true }));
    }
  });

  it('refuses a bad descriptor or mismatched handlers locally, listing every problem', async () => {
    const before = core.registrations().length;
    const bad = await connectPlugin({
      url: broker.url,
      descriptor: {
        id: 'Bad/Id',
        name: 'x',
        description: 'x',
        capabilities: [{ id: 'c', description: 'c', parameters: [{ name: 'p', type: 'color' as 'string' }] }],
      },
      handlers: { c: () => 'x' },
      log: silentSdkLogger(),
    }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(PluginRegistrationError);
    const paths = (bad as PluginRegistrationError).errors.map((e) => e.path);
    expect(paths.some((p) => p.includes('id'))).toBe(true);
    expect(paths.some((p) => p.includes('parameters'))).toBe(true);

    const mismatch = await connectPlugin({
      url: broker.url,
      descriptor: descriptor(uniqueId()),
      handlers: { forecast: () => 'x', typo: () => 'y' },
      log: silentSdkLogger(),
    }).catch((e: unknown) => e);
    expect(mismatch).toBeInstanceOf(PluginRegistrationError);
    const messages = (mismatch as PluginRegistrationError).errors.map((e) => e.message).join('\n');
    expect(messages).toContain('no handler for capability "boom"');
    expect(messages).toContain('no handler for capability "slow"');
    expect(messages).toContain('handler "typo" matches no capability');
    expect(core.registrations().length).toBe(before);
  });

  it('fails at once when the broker refuses the credentials', async () => {
    const guarded = await startTestBroker({
      authenticate: (_client, username, _password, done) => done(null, username === 'good'),
    });
    try {
      const started = Date.now();
      const error = await connectPlugin({
        url: guarded.url,
        credentials: { username: 'bad', password: 'nope' },
        descriptor: descriptor(uniqueId()),
        handlers: { forecast: () => '', boom: () => '', slow: () => '' },
        log: silentSdkLogger(),
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PluginRegistrationError);
      expect(String((error as Error).message)).toMatch(/refused the connection/);
      expect(String((error as Error).message)).not.toContain('nope');
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await guarded.close();
    }
  });
});

describe('startup order', () => {
  it('waits for a broker and a Core that come up after the plugin started', async () => {
    const probe = await startTestBroker();
    const port = probe.port;
    await probe.close();
    const id = uniqueId();
    const pending = connectPlugin({
      url: `mqtt://127.0.0.1:${port}`,
      descriptor: descriptor(id),
      handlers: { forecast: () => 'late sun', boom: () => '', slow: () => '' },
      reconnect_period_ms: 100,
      reconnect_max_ms: 200,
      register_timeout_ms: 500,
      startup_timeout_ms: 10_000,
      log: silentSdkLogger(),
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const lateBroker = await startTestBroker({}, port);
    const lateCore = await FakeCore.start(lateBroker.url);
    try {
      const plugin = await pending;
      plugins.push(plugin);
      const { result } = await lateCore.invoke(id, 'forecast', { city: 'Quito' });
      expect(result).toMatchObject({ success: true, text: 'late sun' });
      await plugin.close();
    } finally {
      await lateCore.close();
      await lateBroker.close();
    }
  });
});

describe('invocation', () => {
  it('runs the handler and publishes a valid result with text and data', async () => {
    const plugin = await connect();
    const { result } = await core.invoke(plugin.pluginId, 'forecast', { city: 'Paris', days: 2 });
    expect(validatePayload('result', result).ok).toBe(true);
    expect(result).toMatchObject({ plugin_id: plugin.pluginId, success: true, text: 'Paris: sunny', data: { city: 'Paris', days: 2 } });
    expect(plugin.stats().succeeded).toBe(1);
  });

  it('turns a throwing handler into success:false with its message', async () => {
    const plugin = await connect();
    const { result } = await core.invoke(plugin.pluginId, 'boom', {});
    expect(result).toMatchObject({ success: false, error: 'the weather station is on fire' });
    // The plugin keeps working afterwards.
    const next = await core.invoke(plugin.pluginId, 'forecast', { city: 'Oslo' });
    expect(next.result.success).toBe(true);
  });

  it('refuses invalid parameters listing every problem, without running the handler', async () => {
    let ran = false;
    const plugin = await connect({
      handlers: {
        forecast: () => {
          ran = true;
          return 'x';
        },
        boom: () => '',
        slow: () => '',
      },
    });
    const { result } = await core.invoke(plugin.pluginId, 'forecast', { days: 'two', wind: true });
    expect(result.success).toBe(false);
    expect(result.error).toContain('missing required parameter "city"');
    expect(result.error).toContain('days');
    expect(result.error).toContain('unknown parameter "wind"');
    const issues = (result.metadata as { errors: { path: string }[] }).errors.map((e) => e.path).sort();
    expect(issues).toEqual(['/city', '/days', '/wind']);
    expect(ran).toBe(false);
    expect(plugin.stats().refused).toBe(1);
  });

  it('answers an unknown capability with a clear error naming the known ones', async () => {
    const plugin = await connect();
    const { result } = await core.invoke(plugin.pluginId, 'tides', {});
    expect(result.success).toBe(false);
    expect(result.error).toContain('unknown capability "tides"');
    expect(result.error).toContain('forecast, boom, slow');
  });

  it('answers a malformed request on its result topic when the request_id is usable, and survives garbage', async () => {
    const plugin = await connect();
    await core.publishRaw(topics.invoke(plugin.pluginId), '{not json');
    await core.publishRaw(topics.invoke(plugin.pluginId), JSON.stringify({ hello: 'world' }));
    const failed = core.waitFor((m) => m.topic === topics.result('bad-request-1'));
    await core.publishRaw(
      topics.invoke(plugin.pluginId),
      JSON.stringify({ request_id: 'bad-request-1', plugin_id: plugin.pluginId, capability_id: 'forecast' }),
    );
    const message = await failed;
    expect(message.json).toMatchObject({ request_id: 'bad-request-1', success: false });
    expect((message.json as { error: string }).error).toMatch(/invalid request.*parameters|invalid request.*deadline/);
    const { result } = await core.invoke(plugin.pluginId, 'forecast', { city: 'Rome' });
    expect(result.success).toBe(true);
    expect(plugin.stats().dropped).toBe(2);
  });

  it('drops a request whose deadline has passed', async () => {
    const plugin = await connect();
    const late = core.invoke(plugin.pluginId, 'forecast', { city: 'Paris' }, { request_id: 'late-1', deadline: Date.now() - 1 });
    late.catch(() => {});
    // The next request is answered; the late one never is.
    await core.invoke(plugin.pluginId, 'forecast', { city: 'Lima' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(core.resultsFor('late-1')).toEqual([]);
    expect(plugin.stats().dropped).toBe(1);
  });

  it('aborts the handler signal at the deadline and sends no late result', async () => {
    let aborted = false;
    const plugin = await connect({
      handlers: {
        forecast: () => '',
        boom: () => '',
        slow: async (_params, ctx) => {
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
          aborted = true;
          return 'too late';
        },
      },
    });
    const call = core.invoke(plugin.pluginId, 'slow', { ms: 5000 }, { request_id: 'deadline-1', timeout_ms: 300 });
    call.catch(() => {});
    await waitUntil(() => aborted);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(core.resultsFor('deadline-1')).toEqual([]);
    expect(plugin.stats().late).toBe(1);
  });

  it('publishes progress events before the final result', async () => {
    const plugin = await connect();
    const { result, progress } = await core.invoke(plugin.pluginId, 'slow', { ms: 50 });
    expect(progress).toEqual([{ request_id: result.request_id, plugin_id: plugin.pluginId, success: true, progress: true, text: 'started' }]);
    expect(result).toMatchObject({ success: true, text: 'slept 50' });
  });

  it('runs at most max_concurrency handlers at once and queues the rest', async () => {
    let running = 0;
    let peak = 0;
    const id = uniqueId();
    const plugin = await connect({
      descriptor: descriptor(id, { max_concurrency: 2 }),
      handlers: {
        forecast: () => '',
        boom: () => '',
        slow: async ({ ms }) => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((resolve) => setTimeout(resolve, Number(ms)));
          running--;
          return 'done';
        },
      },
    });
    const started = Date.now();
    const results = await Promise.all([1, 2, 3, 4, 5].map(() => core.invoke(plugin.pluginId, 'slow', { ms: 100 })));
    expect(results.every((r) => r.result.success)).toBe(true);
    expect(peak).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
  });

  it('runs a redelivered request only once', async () => {
    let runs = 0;
    const plugin = await connect({
      handlers: {
        forecast: () => {
          runs++;
          return 'once';
        },
        boom: () => '',
        slow: () => '',
      },
    });
    const request = { request_id: 'dup-1', plugin_id: plugin.pluginId, capability_id: 'forecast', parameters: { city: 'X' }, deadline: Date.now() + 5000 };
    await core.publishRaw(topics.invoke(plugin.pluginId), JSON.stringify(request));
    await core.publishRaw(topics.invoke(plugin.pluginId), JSON.stringify(request));
    await core.waitFor((m) => m.topic === topics.result('dup-1'), 5000, true);
    await core.invoke(plugin.pluginId, 'forecast', { city: 'Y' });
    expect(core.resultsFor('dup-1')).toHaveLength(1);
    expect(runs).toBe(2);
  });
});

describe('liveness', () => {
  it('heartbeats on its own topic with increasing seq and its epoch', async () => {
    const plugin = await connect();
    await waitUntil(() => core.heartbeats(plugin.pluginId).length >= 3, 5000);
    const beats = core.heartbeats(plugin.pluginId);
    for (const beat of beats) expect(validatePayload('heartbeat', beat).ok).toBe(true);
    expect(beats.every((b) => b.epoch === plugin.epoch)).toBe(true);
    const seqs = beats.map((b) => b.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs[0]).toBeGreaterThanOrEqual(1);
  });

  it('re-registers when a newer Core birth arrives, not for the same or an older one', async () => {
    const plugin = await connect();
    const before = core.registrations(plugin.pluginId).length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(core.registrations(plugin.pluginId).length).toBe(before);
    await core.publishRaw(topics.coreStatus(), JSON.stringify({ online: true, ts: 1 }));
    await core.publishRaw(topics.coreStatus(), JSON.stringify({ online: false, ts: Date.now() + 1000 }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(core.registrations(plugin.pluginId).length).toBe(before);
    await core.birth();
    await core.waitForRegistration(plugin.pluginId, before + 1);
    await waitUntil(() => plugin.stats().registrations === 2);
  });

  it('re-registers on control {cmd:"reregister"} and ignores malformed control messages', async () => {
    const plugin = await connect();
    const before = core.registrations(plugin.pluginId).length;
    await core.control(plugin.pluginId, { cmd: 'explode' });
    await core.publishRaw(topics.control(plugin.pluginId), 'nope');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(core.registrations(plugin.pluginId).length).toBe(before);
    await core.control(plugin.pluginId);
    const again = await core.waitForRegistration(plugin.pluginId, before + 1);
    expect(again['epoch']).toBe(plugin.epoch);
  });

  it('publishes a retained offline status on close, and unregisters only when asked', async () => {
    const first = await connect();
    await first.close();
    const offline = core.statuses(first.pluginId).at(-1) as PluginStatusMessage;
    expect(offline).toMatchObject({ state: 'offline', epoch: first.epoch });
    expect(core.messages.some((m) => m.topic === topics.unregister() && (m.json as { plugin_id?: string }).plugin_id === first.pluginId)).toBe(false);

    const second = await connect();
    const unregistered = core.waitFor((m) => m.topic === topics.unregister() && (m.json as { plugin_id?: string }).plugin_id === second.pluginId);
    await second.close({ unregister: true });
    await unregistered;
    expect(second.connected).toBe(false);
  });
});

describe('reconnection', () => {
  it('reconnects after a broker restart, re-registers and answers again', async () => {
    const plugin = await connect();
    const before = core.registrations(plugin.pluginId).length;
    const statusesBefore = core.statuses(plugin.pluginId).length;
    await broker.restart({ downMs: 300 });
    await core.waitForRegistration(plugin.pluginId, before + 1, 15_000);
    await waitUntil(() => plugin.connected && plugin.stats().registrations >= 2, 10_000);
    expect(plugin.stats().connects).toBeGreaterThanOrEqual(2);
    // The online status is published again for the fresh broker.
    expect(
      core
        .statuses(plugin.pluginId)
        .slice(statusesBefore)
        .some((s) => s.state === 'online' && s.epoch === plugin.epoch),
    ).toBe(true);
    const { result } = await core.invoke(plugin.pluginId, 'forecast', { city: 'Kyiv' });
    expect(result.success).toBe(true);
  });
});

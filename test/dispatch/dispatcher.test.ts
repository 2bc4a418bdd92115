// The dispatcher with a fake adapter: ordering, deadlines, queues and exactly-once endings.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { AdapterCall, PluginAdapter } from '../../src/adapters/adapter.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { silentLogger } from '../../src/log.js';
import type { PluginDescriptor, PluginResult } from '../../src/protocol/types.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';

function descriptor(config: PluginDescriptor['config'] = {}): PluginDescriptor {
  return {
    id: 'dev',
    name: 'Device',
    description: 'a device',
    capabilities: [
      { id: 'echo', name: 'Echo', description: 'echo', parameters: [{ name: 'text', type: 'string', required: true }], post_process: false },
      { id: 'slow', name: 'Slow', description: 'slow', parameters: [], post_process: false, timeout_sec: 0.3 },
    ],
    source: 'external',
    type: 'inline',
    config,
  };
}

class FakeAdapter implements PluginAdapter {
  readonly type = 'inline' as const;
  calls: AdapterCall[] = [];
  running = 0;
  maxRunning = 0;
  aborted = 0;
  constructor(private readonly behaviour: (call: AdapterCall) => Promise<PluginResult>) {}
  async invoke(call: AdapterCall): Promise<PluginResult> {
    this.calls.push(call);
    this.running++;
    this.maxRunning = Math.max(this.maxRunning, this.running);
    call.signal.addEventListener('abort', () => this.aborted++);
    try {
      return await this.behaviour(call);
    } finally {
      this.running--;
    }
  }
}

const never = () => new Promise<PluginResult>(() => {});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function setup(adapter: FakeAdapter, config: PluginDescriptor['config'] = {}) {
  const log = silentLogger();
  const registry = new Registry({ db: new Database(':memory:'), events: new TypedEventBus(log), log });
  registry.register({ descriptor: descriptor(config), owner: 'api' });
  const dispatcher = new Dispatcher({
    registry,
    adapters: [adapter],
    config: { default_timeout_sec: 2, default_max_concurrency: 4, default_queue_limit: 10 },
    log,
  });
  return { registry, dispatcher };
}

describe('Dispatcher', () => {
  it('invokes with a request id and deadline, defaulting to the first capability', async () => {
    const adapter = new FakeAdapter(async (call) => ({ request_id: 'ignored', plugin_id: 'x', success: true, text: String(call.request.parameters.text) }));
    const { dispatcher } = setup(adapter);
    const result = await dispatcher.invoke({ plugin_id: 'dev', parameters: { text: 'hi' }, context: { user_id: 'u1' } });
    expect(result).toMatchObject({ success: true, text: 'hi', plugin_id: 'dev' });
    const request = adapter.calls[0]?.request;
    expect(request).toMatchObject({ capability_id: 'echo', user_id: 'u1', request_id: result.request_id });
    expect(request?.deadline).toBeGreaterThan(Date.now());
  });

  it('times out at the capability deadline, aborts the adapter, and ignores its late answer', async () => {
    let release: (r: PluginResult) => void = () => {};
    const adapter = new FakeAdapter(() => new Promise((r) => (release = r)));
    const { dispatcher } = setup(adapter);
    const started = Date.now();
    const result = await dispatcher.invoke({ plugin_id: 'dev', capability_id: 'slow' });
    expect(result).toMatchObject({ success: false, error_code: 'timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(adapter.aborted).toBe(1);
    release({ request_id: result.request_id, plugin_id: 'dev', success: true, text: 'late' });
    await sleep(20);
    expect(dispatcher.getStats()).toMatchObject({ timed_out: 1, succeeded: 0, in_flight: 0 });
  });

  it('respects max_concurrency and answers busy at once beyond the queue limit', async () => {
    const adapter = new FakeAdapter(async () => {
      await sleep(50);
      return { request_id: '', plugin_id: 'dev', success: true, text: 'ok' };
    });
    const { dispatcher } = setup(adapter, { max_concurrency: 1, queue_limit: 2 });
    const calls = Array.from({ length: 4 }, (_, i) => dispatcher.invoke({ plugin_id: 'dev', parameters: { text: String(i) } }));
    const results = await Promise.all(calls);
    expect(results.map((r) => r.error_code ?? 'ok')).toEqual(['ok', 'ok', 'ok', 'busy']);
    expect(adapter.maxRunning).toBe(1);
  });

  it('frees the queue slot of a hung plugin at the deadline', async () => {
    let first = true;
    const adapter = new FakeAdapter(async () => {
      if (first) {
        first = false;
        return never();
      }
      return { request_id: '', plugin_id: 'dev', success: true, text: 'second' };
    });
    const { dispatcher } = setup(adapter, { max_concurrency: 1 });
    const hung = dispatcher.invoke({ plugin_id: 'dev', capability_id: 'slow' });
    const next = dispatcher.invoke({ plugin_id: 'dev', parameters: { text: 'x' } });
    expect((await hung).error_code).toBe('timeout');
    expect(await next).toMatchObject({ success: true, text: 'second' });
  });

  it('fails in-flight calls at once when the plugin goes offline or is removed', async () => {
    const adapter = new FakeAdapter(never);
    const { dispatcher, registry } = setup(adapter);
    const call = dispatcher.invoke({ plugin_id: 'dev', parameters: { text: 'x' } });
    await sleep(10);
    registry.setState('dev', 'offline', 'will fired');
    expect(await call).toMatchObject({ success: false, error_code: 'offline' });
    const refused = await dispatcher.invoke({ plugin_id: 'dev', parameters: { text: 'x' } });
    expect(refused.error).toMatch(/offline: will fired/);
    registry.setState('dev', 'online');
    const second = dispatcher.invoke({ plugin_id: 'dev', parameters: { text: 'x' } });
    await sleep(10);
    registry.unregister('dev');
    expect(await second).toMatchObject({ success: false, error_code: 'offline' });
  });

  it('validates parameters before sending anything and turns adapter exceptions into errors', async () => {
    const adapter = new FakeAdapter(async () => {
      throw new Error('socket exploded');
    });
    const { dispatcher } = setup(adapter);
    const invalid = await dispatcher.invoke({ plugin_id: 'dev', parameters: { text: 5, extra: true } });
    expect(invalid.error_code).toBe('invalid_params');
    expect(invalid.error).toMatch(/text/);
    expect(invalid.error).toMatch(/unknown parameter "extra"/);
    expect(adapter.calls).toHaveLength(0);
    const thrown = await dispatcher.invoke({ plugin_id: 'dev', parameters: { text: 'x' } });
    expect(thrown).toMatchObject({ success: false, error_code: 'adapter_error', error: 'socket exploded' });
    expect((await dispatcher.invoke({ plugin_id: 'ghost' })).error_code).toBe('not_found');
  });
});

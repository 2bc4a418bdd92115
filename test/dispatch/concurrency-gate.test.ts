// The per-plugin concurrency gate and the dispatcher's cheap abort hook.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { whenAborted, type AdapterCall, type PluginAdapter } from '../../src/adapters/adapter.js';
import { ConcurrencyGate } from '../../src/dispatch/concurrency-gate.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { silentLogger } from '../../src/log.js';
import type { PluginResult } from '../../src/protocol/types.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';

describe('ConcurrencyGate', () => {
  it('runs up to its concurrency at once and the rest first come, first served', () => {
    const gate = new ConcurrencyGate(2);
    const started: number[] = [];
    for (let i = 0; i < 5; i++) gate.enter(() => started.push(i));
    expect(started).toEqual([0, 1]);
    expect([gate.running, gate.waiting]).toEqual([2, 3]);
    gate.leave();
    gate.leave();
    expect(started).toEqual([0, 1, 2, 3]);
    gate.leave();
    gate.leave();
    gate.leave();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect([gate.running, gate.waiting]).toEqual([0, 0]);
  });

  it('keeps order across many waiting calls (the waiting list compacts itself)', () => {
    const gate = new ConcurrencyGate(1);
    const started: number[] = [];
    for (let i = 0; i < 5000; i++) gate.enter(() => started.push(i));
    for (let i = 0; i < 5000; i++) gate.leave();
    expect(started).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    expect([gate.running, gate.waiting]).toEqual([0, 0]);
  });
});

describe('abort hook', () => {
  it('tells an adapter about an abort through onAbort, and a signal read later is already aborted', async () => {
    const log = silentLogger();
    const registry = new Registry({ db: new Database(':memory:'), events: new TypedEventBus(log), log });
    registry.register({
      owner: 'api',
      descriptor: {
        id: 'slowpoke',
        name: 'Slowpoke',
        description: 'never answers',
        capabilities: [{ id: 'wait', name: 'Wait', description: 'wait', parameters: [], post_process: false, timeout_sec: 0.2 }],
        source: 'external',
        type: 'inline',
        config: {},
      },
    });
    let aborted: () => void = () => undefined;
    const abortedOnce = new Promise<void>((resolve) => (aborted = resolve));
    let call: AdapterCall | undefined;
    const adapter: PluginAdapter = {
      type: 'inline',
      invoke(c) {
        call = c;
        whenAborted(c, aborted);
        return new Promise<PluginResult>(() => undefined);
      },
    };
    const dispatcher = new Dispatcher({
      registry,
      adapters: [adapter],
      config: { default_timeout_sec: 5, default_max_concurrency: 1, default_queue_limit: 10 },
      log,
    });
    const result = await dispatcher.invoke({ plugin_id: 'slowpoke' });
    expect(result).toMatchObject({ success: false, error_code: 'timeout' });
    await abortedOnce;
    expect(call!.signal.aborted).toBe(true);
    expect((call!.signal.reason as Error).message).toMatch(/did not answer within 0.2 s/);
    // The slot was freed at the deadline: the next call reaches the adapter.
    const first = call;
    const next = dispatcher.invoke({ plugin_id: 'slowpoke' });
    expect(call).not.toBe(first);
    expect(call!.signal.aborted).toBe(false);
    await next;
    await dispatcher.stop();
  });
});

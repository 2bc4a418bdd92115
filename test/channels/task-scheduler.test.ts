// The task scheduler against a real registry and SQLite: a repeated task runs on schedule through the
// dispatcher and its result goes to the task's user; two schedulers sharing one database (a Core
// restarted within a slot, or two Cores on the same data) never run a slot twice.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startTaskScheduler, type TaskScheduler } from '../../src/channels/task-scheduler.js';
import type { Notification, Notifier } from '../../src/channels/notifier.js';
import type { DispatcherApi, InvokeOptions } from '../../src/dispatch/dispatcher-api.js';
import { silentLogger } from '../../src/log.js';
import type { JsonObject, PluginDescriptor } from '../../src/protocol/types.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';

function plugin(tasks: JsonObject): PluginDescriptor {
  return {
    id: 'ticker',
    name: 'Ticker',
    description: 'Ticks.',
    source: 'built-in',
    type: 'inline',
    config: { tasks },
    capabilities: [{ id: 'tick', name: 'Tick', description: 'Tick.', parameters: [], post_process: false }],
  };
}

const schedulers: TaskScheduler[] = [];
afterEach(async () => {
  for (const s of schedulers.splice(0)) await s.stop();
});

function setup(db: Database.Database) {
  const log = silentLogger();
  const registry = new Registry({ db, events: new TypedEventBus(log), log });
  const calls: InvokeOptions[] = [];
  const delivered: Notification[] = [];
  const dispatcher: DispatcherApi = {
    async invoke(options) {
      calls.push(options);
      return { request_id: `r${calls.length}`, plugin_id: options.plugin_id, success: true, text: `tick ${calls.length}` };
    },
  };
  const notifier: Notifier = {
    async notify(n) {
      delivered.push(n);
      return { ok: true, channel: n.channel ?? 'phone', request_id: 'x' };
    },
  };
  const scheduler = startTaskScheduler({ db, registry, dispatcher, notifier, llm: null, log, timezone: 'UTC', default_user: 'alice', default_channel: null });
  schedulers.push(scheduler);
  return { registry, calls, delivered, scheduler };
}

describe('task scheduler', () => {
  it('runs a repeated task through the dispatcher and sends each result to the user', async () => {
    const db = new Database(':memory:');
    const { registry, calls, delivered, scheduler } = setup(db);
    registry.register({
      descriptor: plugin({ tick: { type: 'repeated', interval_unit: 'seconds', interval: 1, user_id: 'bob', channel: 'board' } }),
      owner: 'builtin',
    });
    expect(scheduler.list()).toEqual([{ plugin_id: 'ticker', task: 'tick', capability_id: 'tick', next_run: expect.any(String), user_id: 'bob' }]);
    await new Promise((r) => setTimeout(r, 2300));
    await scheduler.idle();
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(calls[0]).toMatchObject({
      plugin_id: 'ticker',
      capability_id: 'tick',
      parameters: {},
      context: { user_id: 'bob', channel_name: 'board', channel_type: 'schedule', metadata: { task: 'tick', scheduled_for: expect.any(String) } },
    });
    expect(delivered[0]).toEqual({ user_id: 'bob', text: 'tick 1', plugin_id: 'ticker', channel: 'board' });
    // Unregistering the plugin stops its tasks.
    registry.unregister('ticker', 'builtin');
    const after = calls.length;
    await new Promise((r) => setTimeout(r, 1300));
    expect(calls.length).toBe(after);
    expect(scheduler.list()).toEqual([]);
  });

  it('two schedulers on one database run each slot once between them', async () => {
    const db = new Database(':memory:');
    const first = setup(db);
    const second = setup(db);
    const descriptor = plugin({ tick: { type: 'repeated', interval_unit: 'seconds', interval: 1 } });
    first.registry.register({ descriptor, owner: 'builtin' });
    second.registry.register({ descriptor, owner: 'builtin' });
    await new Promise((r) => setTimeout(r, 3300));
    await Promise.all([first.scheduler.idle(), second.scheduler.idle()]);
    const slots = [...first.calls, ...second.calls].map((c) => (c.context!.metadata as JsonObject)['scheduled_for']);
    expect(slots.length).toBeGreaterThanOrEqual(2);
    // Both computed the same slots (whole seconds) and each ran on one of them only.
    for (const slot of slots) expect(String(slot)).toMatch(/:\d\d\.000Z$/);
    expect(new Set(slots).size).toBe(slots.length);
    expect(first.delivered.length + second.delivered.length).toBe(slots.length);
  });

  it('a task whose plugin lacks the capability is not armed', () => {
    const { registry, scheduler, calls } = setup(new Database(':memory:'));
    registry.register({ descriptor: plugin({ nonsense: { type: 'repeated', interval_unit: 'seconds', interval: 1 } }), owner: 'builtin' });
    expect(scheduler.list()).toEqual([]);
    expect(calls).toEqual([]);
  });
});

// Runs the `tasks` of plugins' config (task-specs.ts) on their schedule: each run calls the capability
// through the dispatcher, like any other call, and the result (post-processed when the capability asks
// for it) goes to the task's user as a notification.
//
// Exactly once per slot: before calling, the run claims its slot in SQLite (task_runs.last_slot only
// moves forward), so a Core restarted within the slot, or a second Core on the same data, never repeats
// it. Slots missed while the Core was down are skipped, not caught up (as HomeClaw's scheduler does):
// a morning report at noon is news nobody wants.
import type Database from 'better-sqlite3';
import type { DispatcherApi } from '../dispatch/dispatcher-api.js';
import type { Logger } from '../log.js';
import type { LlmClient } from '../conversation/llm-client.js';
import { describeFailure, postProcess } from '../conversation/post-process.js';
import type { PluginRecord } from '../registry/record.js';
import type { RegistryApi } from '../registry/registry-api.js';
import type { Notifier } from './notifier.js';
import { nextRun, readPluginTasks, type PluginTask } from './task-specs.js';

/** Timers are re-armed at least this often, so a long wait survives clock changes and Node's 24.8-day limit. */
const MAX_TIMER_MS = 60 * 60 * 1000;

export interface TaskSchedulerDeps {
  db: Database.Database;
  registry: Pick<RegistryApi, 'list' | 'get' | 'events'>;
  dispatcher: DispatcherApi;
  notifier: Notifier;
  llm: LlmClient | null;
  log: Logger;
  timezone: string;
  /** Who gets results when a task names no user_id, and where (null: the user's last channel). */
  default_user: string | null;
  default_channel: string | null;
  now?: () => number;
}

export interface ScheduledTaskView {
  plugin_id: string;
  task: string;
  capability_id: string;
  next_run: string | null;
  user_id: string | null;
}

export interface TaskScheduler {
  /** The tasks being scheduled, with their next run (status, tests). */
  list(): ScheduledTaskView[];
  /** Resolves when no run is in progress (tests). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

interface Armed {
  task: PluginTask;
  origin: Date;
  next?: Date;
  timer?: NodeJS.Timeout;
}

export function startTaskScheduler(deps: TaskSchedulerDeps): TaskScheduler {
  const now = deps.now ?? Date.now;
  const log = deps.log;
  deps.db.exec(`CREATE TABLE IF NOT EXISTS task_runs (
    plugin_id TEXT NOT NULL,
    task TEXT NOT NULL,
    last_slot INTEGER NOT NULL,
    PRIMARY KEY (plugin_id, task)
  )`);
  const claimStatement = deps.db.prepare(
    `INSERT INTO task_runs (plugin_id, task, last_slot) VALUES (?, ?, ?)
     ON CONFLICT (plugin_id, task) DO UPDATE SET last_slot = excluded.last_slot WHERE excluded.last_slot > task_runs.last_slot`,
  );
  const armed = new Map<string, Armed[]>();
  const running = new Set<Promise<void>>();
  let stopped = false;

  const claim = (task: PluginTask, slot: Date): boolean => claimStatement.run(task.plugin_id, task.name, slot.getTime()).changes === 1;

  function arm(entry: Armed): void {
    if (stopped) return;
    entry.next ??= nextRun(entry.task.timing, new Date(now()), deps.timezone, entry.origin);
    if (!entry.next) return;
    const delay = Math.max(0, Math.min(MAX_TIMER_MS, entry.next.getTime() - now()));
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      if (!entry.next || entry.next.getTime() > now()) return arm(entry);
      const slot = entry.next;
      entry.next = undefined;
      const run = fire(entry.task, slot).finally(() => running.delete(run));
      running.add(run);
      arm(entry);
    }, delay);
    entry.timer.unref();
  }

  async function fire(task: PluginTask, slot: Date): Promise<void> {
    const taskLog = log.child({ plugin_id: task.plugin_id, task: task.name, slot: slot.toISOString() });
    if (!claim(task, slot)) {
      taskLog.info('scheduled task slot already run (another run claimed it); skipped');
      return;
    }
    const user = task.user_id ?? deps.default_user ?? undefined;
    const channel = task.channel ?? deps.default_channel ?? undefined;
    const result = await deps.dispatcher.invoke({
      plugin_id: task.plugin_id,
      capability_id: task.capability_id,
      parameters: task.parameters,
      context: {
        channel_name: channel ?? 'schedule',
        channel_type: 'schedule',
        ...(user ? { user_id: user } : {}),
        metadata: { task: task.name, scheduled_for: slot.toISOString() },
      },
    });
    const capability = deps.registry.get(task.plugin_id)?.descriptor.capabilities.find((c) => c.id === task.capability_id);
    const text = result.success
      ? capability
        ? await postProcess({ result, capability, llm: deps.llm, userText: `(scheduled task ${task.name})`, log: taskLog })
        : (result.text ?? '')
      : `Scheduled task ${task.plugin_id}.${task.name} failed. ${describeFailure(result, task.plugin_id, task.capability_id)}`;
    taskLog.info({ success: result.success, error_code: result.error_code }, 'scheduled task ran');
    if (!user) {
      taskLog.warn('scheduled task result not delivered: no user_id in the task and scheduler.user_id is not set');
      return;
    }
    const outcome = await deps.notifier.notify({ user_id: user, text, plugin_id: task.plugin_id, ...(channel ? { channel } : {}) });
    if (!outcome.ok) taskLog.warn({ error: outcome.error }, 'scheduled task result not delivered');
  }

  function disarm(pluginId: string): void {
    for (const entry of armed.get(pluginId) ?? []) if (entry.timer) clearTimeout(entry.timer);
    armed.delete(pluginId);
  }

  function follow(record: PluginRecord): void {
    disarm(record.descriptor.id);
    const { tasks, problems } = readPluginTasks(record.descriptor);
    for (const problem of problems) log.warn({ plugin_id: record.descriptor.id, problem }, `scheduled task of ${record.descriptor.id} not run: ${problem}`);
    if (tasks.length === 0) return;
    const origin = new Date(now());
    const entries = tasks.map((task) => ({ task, origin }));
    armed.set(record.descriptor.id, entries);
    for (const entry of entries) arm(entry);
    log.info({ plugin_id: record.descriptor.id, tasks: tasks.map((t) => t.name) }, 'scheduled tasks armed');
  }

  const unsubscribe = [
    deps.registry.events.on('plugin.registered', ({ record }) => follow(record)),
    deps.registry.events.on('plugin.updated', ({ record }) => follow(record)),
    deps.registry.events.on('plugin.removed', ({ record }) => disarm(record.descriptor.id)),
  ];
  for (const record of deps.registry.list()) follow(record);

  return {
    list() {
      return [...armed.values()].flat().map((entry) => ({
        plugin_id: entry.task.plugin_id,
        task: entry.task.name,
        capability_id: entry.task.capability_id,
        next_run: entry.next?.toISOString() ?? null,
        user_id: entry.task.user_id ?? deps.default_user,
      }));
    },
    async idle() {
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    async stop() {
      stopped = true;
      for (const off of unsubscribe) off();
      for (const id of [...armed.keys()]) disarm(id);
      await Promise.allSettled([...running]);
    },
  };
}

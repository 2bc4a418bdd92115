// HomeClaw's task format (its own Weather and News config.yml) read into schedules, and each kind's next
// run in a zone: fixed daily/weekly/monthly/yearly, repeated from a start time, random, cron.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { nextRun, readPluginTasks, type TaskTiming } from '../../src/channels/task-specs.js';
import type { JsonObject, PluginDescriptor } from '../../src/protocol/types.js';

function descriptor(id: string, capabilityIds: string[], config: JsonObject): PluginDescriptor {
  return {
    id,
    name: id,
    description: id,
    source: 'built-in',
    type: 'inline',
    config,
    capabilities: capabilityIds.map((c) => ({ id: c, name: c, description: c, parameters: [], post_process: false })),
  };
}

function fixture(name: string): JsonObject {
  return parseYaml(readFileSync(new URL(`../fixtures/homeclaw/${name}`, import.meta.url), 'utf8')) as JsonObject;
}

const ZONE = 'Europe/Berlin';
// Thursday 26 November 2026, 11:00 in Berlin.
const AFTER = new Date('2026-11-26T10:00:00Z');

function next(timing: TaskTiming, after = AFTER, origin = AFTER): string | undefined {
  return nextRun(timing, after, ZONE, origin)?.toISOString();
}

describe("HomeClaw's own task blocks", () => {
  it('Weather: fixed daily at 08:00 (the weekly/monthly keys beside it are ignored for daily)', () => {
    const { tasks, problems } = readPluginTasks(descriptor('weather', ['fetch_weather'], fixture('weather-tasks.yml')));
    expect(problems).toEqual([]);
    expect(tasks).toEqual([
      { plugin_id: 'weather', name: 'fetch_weather', capability_id: 'fetch_weather', parameters: {}, timing: { kind: 'cron', pattern: '0 0 8 * * *' } },
    ]);
    expect(next(tasks[0]!.timing)).toBe('2026-11-27T07:00:00.000Z');
  });

  it('News: repeated every 4 hours from 08:30', () => {
    const { tasks } = readPluginTasks(descriptor('news', ['fetch_latest_news'], fixture('news-tasks.yml')));
    expect(tasks[0]!.timing).toEqual({ kind: 'interval', every_ms: 4 * 3_600_000, start_time: { hour: 8, minute: 30, second: 0 } });
    // 08:30, 12:30, 16:30 ... Berlin: after 11:00 comes 12:30 (11:30 UTC), then 16:30.
    expect(next(tasks[0]!.timing)).toBe('2026-11-26T11:30:00.000Z');
    expect(next(tasks[0]!.timing, new Date('2026-11-26T11:30:00Z'))).toBe('2026-11-26T15:30:00.000Z');
  });
});

describe('each kind of schedule', () => {
  const read = (spec: JsonObject, capabilities = ['go']) => readPluginTasks(descriptor('p', capabilities, { tasks: { go: spec } }));

  it('fixed weekly, monthly and yearly', () => {
    const weekly = read({ type: 'fixed', frequency: 'weekly', day_of_week: 'monday', time: '07:15' }).tasks[0]!.timing;
    expect(next(weekly)).toBe('2026-11-30T06:15:00.000Z');
    const monthly = read({ type: 'fixed', frequency: 'monthly', day_of_month: 15, time: '09:00:00' }).tasks[0]!.timing;
    expect(next(monthly)).toBe('2026-12-15T08:00:00.000Z');
    const yearly = read({ type: 'fixed', frequency: 'yearly', month: 5, day_of_month: 15, time: '08:00:00' }).tasks[0]!.timing;
    // May is summer time in Berlin (UTC+2).
    expect(next(yearly)).toBe('2027-05-15T06:00:00.000Z');
  });

  it('repeated without a start time runs on the multiples of its interval, whenever it was taken up', () => {
    const timing = read({ type: 'repeated', interval_unit: 'minutes', interval: 30 }).tasks[0]!.timing;
    expect(next(timing, new Date('2026-11-26T10:45:00Z'), AFTER)).toBe('2026-11-26T11:00:00.000Z');
    expect(next(timing, new Date('2026-11-26T10:45:00Z'), new Date('2026-11-26T10:44:59Z'))).toBe('2026-11-26T11:00:00.000Z');
    const fourHours = read({ type: 'repeated', interval_unit: 'hours', interval: 4 }).tasks[0]!.timing;
    expect(next(fourHours, new Date('2026-11-26T10:45:00Z'))).toBe('2026-11-26T12:00:00.000Z');
  });

  it('random: between min and max from now', () => {
    const timing = read({ type: 'random', interval_unit: 'hours', min_interval: 2, max_interval: 6 }).tasks[0]!.timing;
    expect(nextRun(timing, AFTER, ZONE, AFTER, () => 0)?.getTime()).toBe(AFTER.getTime() + 2 * 3_600_000);
    expect(nextRun(timing, AFTER, ZONE, AFTER, () => 0.5)?.getTime()).toBe(AFTER.getTime() + 4 * 3_600_000);
  });

  it('cron, another capability, parameters and who gets the result', () => {
    const { tasks } = readPluginTasks(
      descriptor('p', ['forecast'], {
        tasks: { morning: { cron: '0 7 * * 1-5', capability: 'forecast', parameters: { city: 'Paris' }, user_id: 'alice', channel: 'kitchen' } },
      }),
    );
    expect(tasks[0]).toMatchObject({ name: 'morning', capability_id: 'forecast', parameters: { city: 'Paris' }, user_id: 'alice', channel: 'kitchen' });
    expect(next(tasks[0]!.timing)).toBe('2026-11-27T06:00:00.000Z');
  });

  it('explains every task that cannot run, and keeps the others', () => {
    const { tasks, problems } = readPluginTasks(
      descriptor('p', ['a', 'b'], {
        tasks: {
          a: { type: 'fixed', frequency: 'weekly', day_of_week: 'funday', time: '08:00' },
          b: { type: 'repeated', interval_unit: 'fortnights', interval: 1 },
          c: { type: 'fixed', frequency: 'daily', time: '08:00' },
          ok: { type: 'fixed', frequency: 'daily', time: '25:00', capability: 'a' },
          fine: { cron: '*/5 * * * *', capability: 'b' },
        },
      }),
    );
    expect(tasks.map((t) => t.name)).toEqual(['fine']);
    expect(problems).toEqual([
      'tasks.a: day_of_week must be a weekday name (monday ... sunday)',
      'tasks.b: repeated tasks need interval_unit (seconds ... weeks) and a positive interval',
      'tasks.c: the plugin has no capability "c" (set capability: <id> when the task name differs)',
      'tasks.ok: time must be "HH:MM:SS"',
    ]);
  });
});

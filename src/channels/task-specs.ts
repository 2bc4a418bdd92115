// HomeClaw's scheduled tasks, as plugins write them in config.yml:
//
//   tasks:
//     fetch_weather:                       # the capability (HomeClaw: the method) to call
//       type: fixed                        # fixed | repeated | random
//       frequency: daily                   # fixed: daily | weekly | monthly | yearly
//       day_of_week: monday                #   weekly
//       day_of_month: 15                   #   monthly, yearly
//       month: 5                           #   yearly
//       time: "08:00:00"                   #   HH:MM:SS (or HH:MM)
//     fetch_latest_news:
//       type: repeated
//       interval_unit: hours               # repeated, random: seconds | minutes | hours | days | weeks
//       interval: 4                        # repeated
//       start_time: "08:30:00"             # repeated: first run at this time, then every interval
//     quote:
//       type: random
//       interval_unit: hours
//       min_interval: 2                    # random: a random delay between the two, again and again
//       max_interval: 6
//
// Beyond HomeClaw, each task may say `cron: "0 8 * * 1-5"` (instead of type), `capability` (when the
// task's name is not the capability id), `parameters`, and who gets the result: `user_id`, `channel`.
import { Cron } from 'croner';
import type { CapabilitySpec, JsonObject, JsonValue, PluginDescriptor } from '../protocol/types.js';
import { isPlainObject } from '../kit/plain-object.js';

export type TaskTiming =
  | { kind: 'cron'; pattern: string }
  | { kind: 'interval'; every_ms: number; start_time?: ClockTime }
  | { kind: 'random'; min_ms: number; max_ms: number };

export interface ClockTime {
  hour: number;
  minute: number;
  second: number;
}

export interface PluginTask {
  plugin_id: string;
  /** The key under `tasks`. */
  name: string;
  capability_id: string;
  parameters: JsonObject;
  user_id?: string;
  channel?: string;
  timing: TaskTiming;
}

const UNIT_MS: Record<string, number> = { seconds: 1000, minutes: 60_000, hours: 3_600_000, days: 86_400_000, weeks: 604_800_000 };
const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

export function parseClockTime(value: JsonValue | undefined): ClockTime | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?$/.exec(value.trim());
  if (!match) return undefined;
  return { hour: Number(match[1]), minute: Number(match[2]), second: Number(match[3] ?? 0) };
}

function positive(value: JsonValue | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

function inRange(value: JsonValue | undefined, min: number, max: number): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max ? value : undefined;
}

function fixedPattern(spec: JsonObject): string | string[] {
  const time = parseClockTime(spec['time']);
  if (!time) return ['time must be "HH:MM:SS"'];
  const at = `${time.second} ${time.minute} ${time.hour}`;
  switch (spec['frequency']) {
    case 'daily':
      return `${at} * * *`;
    case 'weekly': {
      const day = typeof spec['day_of_week'] === 'string' ? WEEKDAYS.indexOf(spec['day_of_week'].toLowerCase()) : -1;
      return day < 0 ? ['day_of_week must be a weekday name (monday ... sunday)'] : `${at} * * ${day}`;
    }
    case 'monthly': {
      const day = inRange(spec['day_of_month'], 1, 31);
      return day === undefined ? ['day_of_month must be 1-31'] : `${at} ${day} * *`;
    }
    case 'yearly': {
      const day = inRange(spec['day_of_month'], 1, 31);
      const month = inRange(spec['month'], 1, 12);
      if (day === undefined || month === undefined) return ['yearly tasks need day_of_month (1-31) and month (1-12)'];
      return `${at} ${day} ${month} *`;
    }
    default:
      return [`frequency must be daily, weekly, monthly or yearly, not ${JSON.stringify(spec['frequency'] ?? null)}`];
  }
}

function readTiming(spec: JsonObject): TaskTiming | string[] {
  if (spec['cron'] !== undefined) {
    const pattern = spec['cron'];
    if (typeof pattern !== 'string') return ['cron must be a cron expression'];
    try {
      new Cron(pattern, { paused: true });
    } catch (error) {
      return [`cron ${JSON.stringify(pattern)} is invalid: ${(error as Error).message}`];
    }
    return { kind: 'cron', pattern };
  }
  const unit = typeof spec['interval_unit'] === 'string' ? UNIT_MS[spec['interval_unit']] : undefined;
  switch (spec['type']) {
    case 'fixed': {
      const pattern = fixedPattern(spec);
      return typeof pattern === 'string' ? { kind: 'cron', pattern } : pattern;
    }
    case 'repeated': {
      const interval = positive(spec['interval']);
      if (!unit || interval === undefined) return ['repeated tasks need interval_unit (seconds ... weeks) and a positive interval'];
      const timing: TaskTiming = { kind: 'interval', every_ms: interval * unit };
      if (spec['start_time'] !== undefined && spec['start_time'] !== null) {
        const start = parseClockTime(spec['start_time']);
        if (!start) return ['start_time must be "HH:MM:SS"'];
        timing.start_time = start;
      }
      return timing;
    }
    case 'random': {
      const min = positive(spec['min_interval']);
      const max = positive(spec['max_interval']);
      if (!unit || min === undefined || max === undefined || max < min) {
        return ['random tasks need interval_unit and 0 < min_interval <= max_interval'];
      }
      return { kind: 'random', min_ms: min * unit, max_ms: max * unit };
    }
    default:
      return [`type must be fixed, repeated or random (or give cron), not ${JSON.stringify(spec['type'] ?? null)}`];
  }
}

export interface TaskReading {
  tasks: PluginTask[];
  /** One line per task that cannot run, naming the task and why. */
  problems: string[];
}

/** The tasks of one plugin's config (config.tasks), checked against its capabilities. */
export function readPluginTasks(descriptor: PluginDescriptor): TaskReading {
  const reading: TaskReading = { tasks: [], problems: [] };
  const raw = descriptor.config['tasks'];
  if (raw === undefined || raw === null) return reading;
  if (!isPlainObject(raw)) {
    reading.problems.push('tasks must be a mapping of task name to schedule');
    return reading;
  }
  for (const [name, spec] of Object.entries(raw)) {
    if (!isPlainObject(spec)) {
      reading.problems.push(`tasks.${name}: must be a mapping`);
      continue;
    }
    const capabilityId = typeof spec['capability'] === 'string' ? spec['capability'] : name;
    const capability: CapabilitySpec | undefined = descriptor.capabilities.find((c) => c.id === capabilityId);
    const timing = readTiming(spec);
    const problems = Array.isArray(timing) ? [...timing] : [];
    if (!capability) problems.push(`the plugin has no capability "${capabilityId}" (set capability: <id> when the task name differs)`);
    if (spec['parameters'] !== undefined && !isPlainObject(spec['parameters'])) problems.push('parameters must be a mapping');
    for (const key of ['user_id', 'channel'] as const) {
      if (spec[key] !== undefined && spec[key] !== null && typeof spec[key] !== 'string') problems.push(`${key} must be a string`);
    }
    if (problems.length > 0 || Array.isArray(timing)) {
      reading.problems.push(...problems.map((p) => `tasks.${name}: ${p}`));
      continue;
    }
    reading.tasks.push({
      plugin_id: descriptor.id,
      name,
      capability_id: capabilityId,
      parameters: isPlainObject(spec['parameters']) ? spec['parameters'] : {},
      ...(typeof spec['user_id'] === 'string' ? { user_id: spec['user_id'] } : {}),
      ...(typeof spec['channel'] === 'string' ? { channel: spec['channel'] } : {}),
      timing,
    });
  }
  return reading;
}

/** Milliseconds of a wall-clock time in a zone on the day of `at` (in that zone). */
function zonedClockOnDay(at: Date, time: ClockTime, timezone: string): Date {
  // croner does the zone arithmetic (DST included): the next occurrence of that daily time from the
  // start of the day is that day's occurrence.
  const dayStart = new Cron(`0 0 0 * * *`, { timezone, paused: true }).previousRuns(1, new Date(at.getTime() + 1))[0] ?? at;
  const daily = new Cron(`${time.second} ${time.minute} ${time.hour} * * *`, { timezone, paused: true });
  return daily.nextRun(new Date(dayStart.getTime() - 1)) ?? at;
}

/**
 * The first run strictly after `after`. A repeated task with a start_time runs at that time on the day
 * the scheduler took it up (`origin`), then every interval; without one, its runs are the multiples of
 * the interval since the Unix epoch (every 4 hours: 00:00, 04:00 ... UTC), the same in every process,
 * so a restart or a second Core computes the same slots and the slot claim keeps each run single.
 */
export function nextRun(timing: TaskTiming, after: Date, timezone: string, origin: Date, random: () => number = Math.random): Date | undefined {
  switch (timing.kind) {
    case 'cron':
      return new Cron(timing.pattern, { timezone, paused: true }).nextRun(after) ?? undefined;
    case 'interval': {
      const anchor = timing.start_time ? zonedClockOnDay(origin, timing.start_time, timezone).getTime() : 0;
      const steps = Math.floor((after.getTime() - anchor) / timing.every_ms) + 1;
      return new Date(anchor + Math.max(0, steps) * timing.every_ms);
    }
    case 'random':
      return new Date(after.getTime() + timing.min_ms + random() * (timing.max_ms - timing.min_ms));
  }
}

// The built-in "time" plugin: Intl does the time zone arithmetic, so it works offline.
import type { BuiltinContext, BuiltinReturn } from '../../src/adapters/builtin-module.js';
import type { JsonObject } from '../../src/protocol/types.js';

export interface ZonedTime {
  iso: string;
  date: string;
  time: string;
  weekday: string;
  timezone: string;
  utc_offset: string;
}

/** Resolves a zone name to Intl's canonical spelling, or undefined when Intl does not know it. */
export function canonicalTimeZone(name: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

export function zonedTime(instant: Date, timeZone: string): ZonedTime {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'long',
      hourCycle: 'h23',
      timeZoneName: 'longOffset',
    })
      .formatToParts(instant)
      .map((p) => [p.type, p.value]),
  ) as Record<string, string>;
  // "GMT+02:00" → "+02:00"; plain "GMT" means UTC itself.
  const offset = (parts.timeZoneName ?? 'GMT').replace('GMT', '') || '+00:00';
  const date = `${parts.year}-${parts.month}-${parts.day}`;
  const time = `${parts.hour}:${parts.minute}:${parts.second}`;
  return { iso: `${date}T${time}${offset}`, date, time, weekday: parts.weekday ?? '', timezone: timeZone, utc_offset: `UTC${offset}` };
}

function humanDate(instant: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone, weekday: 'long', day: 'numeric', month: 'long', year: 'numeric' }).format(instant);
}

function defaultZone(ctx: BuiltinContext): string {
  const configured = ctx.config.default_parameters?.timezone;
  if (typeof configured === 'string' && configured) return configured;
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

export async function now(params: JsonObject, ctx: BuiltinContext): Promise<BuiltinReturn> {
  const requested = typeof params.timezone === 'string' && params.timezone.trim() ? params.timezone.trim() : defaultZone(ctx);
  const timeZone = canonicalTimeZone(requested);
  if (!timeZone) {
    return {
      success: false,
      error: `unknown time zone "${requested}": use an IANA name such as Europe/Berlin, America/New_York, Asia/Tokyo or UTC`,
    };
  }
  const instant = new Date();
  const zoned = zonedTime(instant, timeZone);
  return {
    text: `It is ${humanDate(instant, timeZone)}, ${zoned.time.slice(0, 5)} in ${timeZone} (${zoned.utc_offset}).`,
    data: { ...zoned },
  };
}

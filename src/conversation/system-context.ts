// The request's system values (datetime, timezone, location) for the resolver's system_key parameters
// and the system prompt. The timezone comes from the message, else the Core's default.
import type { SystemContext } from './resolver-api.js';

export function isValidTimeZone(timeZone: string): boolean {
  if (formatters.has(timeZone)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}

export function defaultTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** One formatter per time zone: building an Intl.DateTimeFormat costs far more than using one, per message. */
const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_FORMATTERS = 64;

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    });
    // Time zones come from messages: keep the map bounded.
    if (formatters.size >= MAX_FORMATTERS) formatters.clear();
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** ISO 8601 local date-time with the zone's offset, e.g. 2025-01-31T09:05:00+01:00. */
function localParts(now: Date, timeZone: string): { date: string; time: string; offset: string } {
  const parts = formatterFor(timeZone).formatToParts(now);
  const get = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? '';
  const zoneName = get('timeZoneName'); // "GMT+01:00" or "GMT"
  const offset = zoneName === 'GMT' || zoneName === '' ? '+00:00' : zoneName.replace('GMT', '');
  return { date: `${get('year')}-${get('month')}-${get('day')}`, time: `${get('hour')}:${get('minute')}:${get('second')}`, offset };
}

export function buildSystemContext(input: {
  now: Date;
  timezone?: string;
  fallbackTimezone: string;
  location?: string;
  user_id: string;
  channel: string;
}): SystemContext {
  const timezone = input.timezone && isValidTimeZone(input.timezone) ? input.timezone : input.fallbackTimezone;
  const { date, time, offset } = localParts(input.now, timezone);
  return {
    datetime: `${date}T${time}${offset}`,
    date,
    time,
    timezone,
    ...(input.location ? { location: input.location } : {}),
    user_id: input.user_id,
    channel: input.channel,
  };
}

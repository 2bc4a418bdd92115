// Wall-clock times in an IANA zone, without a date library: the zone's offset at an instant comes from
// Intl, and a wall-clock time is turned into an instant by correcting a first guess with that offset.
const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** Minutes the zone is ahead of UTC at that instant (Europe/Berlin in winter: 60). */
export function zoneOffsetMinutes(instant: number, timeZone: string): number {
  let format = offsetFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'longOffset' });
    offsetFormats.set(timeZone, format);
  }
  const name = format.formatToParts(new Date(instant)).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const match = /GMT([+-])(\d{2}):?(\d{2})?/.exec(name);
  if (!match) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3] ?? 0);
  return match[1] === '-' ? -minutes : minutes;
}

export interface WallClock {
  year: number;
  /** 1-12 */
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The instant of a wall-clock time in the zone (twice corrected, so DST changes between guess and result are right). */
export function instantOf(clock: WallClock, timeZone: string): number {
  const guess = Date.UTC(clock.year, clock.month - 1, clock.day, clock.hour, clock.minute, clock.second);
  const first = guess - zoneOffsetMinutes(guess, timeZone) * 60_000;
  return guess - zoneOffsetMinutes(first, timeZone) * 60_000;
}

/** "Mon 30 Nov 08:00" in the zone; the year is added when it is not this year's. */
export function describeInstant(instant: number, timeZone: string, now: number = Date.now()): string {
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(instant));
  const get = (type: Intl.DateTimeFormatPartTypes): string => parts.find((p) => p.type === type)?.value ?? '';
  const thisYear = new Intl.DateTimeFormat('en-GB', { timeZone, year: 'numeric' }).format(new Date(now));
  const year = get('year') === thisYear ? '' : ` ${get('year')}`;
  return `${get('weekday')} ${get('day')} ${get('month')}${year} ${get('hour')}:${get('minute')}`;
}

// Reminders in the user's words, read against a fixed "now" in a fixed zone: everyday phrases
// ("remind me at 7 pm to call mom", "every Monday at 8 remind me to take out the bins") and
// the other forms the plugin documents; times are the zone's wall clock, DST included.
import { describe, expect, it } from 'vitest';
import { parseSchedule, readClock, reminderText, type ParsedSchedule } from '../../plugins/reminders/parse.js';
import { describeInstant, instantOf } from '../../plugins/reminders/zoned-time.js';

// Thursday 26 November 2026, 18:30 in Berlin (UTC+1).
const NOW = new Date('2026-11-26T17:30:00Z');
const ZONE = 'Europe/Berlin';

function parsed(sentence: string, now = NOW, zone = ZONE): ParsedSchedule {
  const outcome = parseSchedule(sentence, now, zone);
  if (!outcome || 'error' in outcome) throw new Error(`expected a schedule for "${sentence}", got ${JSON.stringify(outcome)}`);
  return outcome;
}

describe('one-time reminders', () => {
  it('"remind me at 7 pm to call mom": today 19:00 in the user zone, text "call mom"', () => {
    const { schedule, rest } = parsed('remind me at 7 pm to call mom');
    expect(schedule).toEqual({ kind: 'once', at: Date.parse('2026-11-26T18:00:00Z') });
    expect(reminderText(rest)).toBe('call mom');
  });

  it('a time already past today is tomorrow; relative times count from now', () => {
    expect(parsed('at 6 pm feed the cat').schedule).toEqual({ kind: 'once', at: Date.parse('2026-11-27T17:00:00Z') });
    expect(parsed('in 10 minutes check the oven').schedule).toEqual({ kind: 'once', at: NOW.getTime() + 600_000 });
    expect(reminderText(parsed('Remind me in 10 minutes to check the oven').rest)).toBe('check the oven');
  });

  it('a day without a time means 09:00 that day', () => {
    expect(parsed('tomorrow dentist').schedule).toEqual({ kind: 'once', at: Date.parse('2026-11-27T08:00:00Z') });
  });

  it('uses the offset of the target date, not of today (DST starts 28 March 2027)', () => {
    expect(parsed('on March 30 at 9am renew the insurance').schedule).toEqual({ kind: 'once', at: Date.parse('2027-03-30T07:00:00Z') });
  });

  it('reads the same words in another zone', () => {
    expect(parsed('at 7 pm call mom', NOW, 'Asia/Tokyo').schedule).toEqual({ kind: 'once', at: Date.parse('2026-11-27T10:00:00Z') });
  });

  it('a time that has passed, or no time at all, is not a schedule', () => {
    expect(parseSchedule('remind me at 5 pm today to call mom', NOW, ZONE)).toEqual({ error: expect.stringContaining('already passed') });
    expect(parseSchedule('remind me to call mom', NOW, ZONE)).toBeUndefined();
  });
});

describe('repeating reminders', () => {
  it('"every Monday at 8 remind me to take out the bins"', () => {
    const { schedule, rest } = parsed('every Monday at 8 remind me to take out the bins');
    expect(schedule).toEqual({ kind: 'cron', pattern: '0 0 8 * * 1', description: 'every Monday at 08:00' });
    expect(reminderText(rest)).toBe('take out the bins');
  });

  it('days, weekdays, several days, morning defaults and intervals', () => {
    expect(parsed('every day at 7:30 pm take the pills').schedule).toMatchObject({ pattern: '0 30 19 * * *' });
    expect(parsed('every weekday at 7:30 wake up').schedule).toMatchObject({ pattern: '0 30 7 * * 1-5' });
    expect(parsed('each Monday and Thursday at 6pm gym').schedule).toMatchObject({ pattern: '0 0 18 * * 1,4' });
    expect(parsed('every morning stretch').schedule).toMatchObject({ pattern: '0 0 8 * * *' });
    expect(parsed('daily at noon lunch').schedule).toMatchObject({ pattern: '0 0 12 * * *' });
    expect(parsed('every 2 hours drink water').schedule).toEqual({ kind: 'interval', every_ms: 7_200_000, description: 'every 2 hours' });
    expect(reminderText(parsed('every 2 hours drink water').rest)).toBe('drink water');
    expect(parseSchedule('every 1 seconds spam', NOW, ZONE)).toEqual({ error: expect.stringContaining('at most every 10 seconds') });
  });
});

describe('helpers', () => {
  it('readClock understands am/pm, 24 h, noon and midnight, and refuses nonsense', () => {
    expect(readClock('7 pm')).toEqual({ hour: 19, minute: 0 });
    expect(readClock('12am')).toEqual({ hour: 0, minute: 0 });
    expect(readClock('19.45')).toEqual({ hour: 19, minute: 45 });
    expect(readClock('noon')).toEqual({ hour: 12, minute: 0 });
    expect(readClock('25:00')).toBeUndefined();
    expect(readClock('13 pm')).toBeUndefined();
  });

  it('instantOf and describeInstant agree in the zone', () => {
    const at = instantOf({ year: 2026, month: 7, day: 1, hour: 8, minute: 0, second: 0 }, ZONE);
    expect(new Date(at).toISOString()).toBe('2026-07-01T06:00:00.000Z');
    expect(describeInstant(at, ZONE, NOW.getTime())).toBe('Wed 1 Jul 08:00');
    expect(describeInstant(Date.parse('2027-01-04T07:00:00Z'), ZONE, NOW.getTime())).toBe('Mon 4 Jan 2027 08:00');
  });
});

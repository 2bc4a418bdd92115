// Reminders in the user's words: "remind me at 7 pm to call mom", "every Monday at 8 remind me to take
// out the bins", "in 10 minutes check the oven", "tomorrow at 9 dentist", "every 2 hours drink water".
// One-time dates and times are read by chrono (chrono-node) in the user's zone; repetitions by the
// small grammar below, which becomes a cron pattern (croner) or a fixed interval.
import * as chrono from 'chrono-node';
import { instantOf, zoneOffsetMinutes } from './zoned-time.js';

export type Schedule =
  | { kind: 'once'; at: number }
  | { kind: 'cron'; pattern: string; description: string }
  | { kind: 'interval'; every_ms: number; description: string };

export interface ParsedSchedule {
  schedule: Schedule;
  /** The words around the time phrase: what to be reminded of, when the phrase was a whole sentence. */
  rest: string;
}

const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const DAY_WORD = `(?:${DAYS.map((d) => `${d}s?`).join('|')}|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)`;
const UNITS: Record<string, number> = { second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000, week: 604_800_000 };
const TIME = `(?:noon|midnight|\\d{1,2}(?:[:.]\\d{2})?\\s*(?:am|pm|a\\.m\\.|p\\.m\\.)?)`;
const AT_TIME = new RegExp(`\\b(?:at|@)\\s+(${TIME})(?![\\w:])`, 'i');
const DAY_LIST = `${DAY_WORD}(?:\\s*(?:,|and|&)\\s*${DAY_WORD})*`;
const RECURRENCE = new RegExp(
  `\\b(?:every|each)\\s+(?:(\\d+)\\s+(second|minute|hour|day|week)s?|(second|minute|hour)|(${DAY_LIST})|(day|weekday|weekend|morning|evening|night|week))\\b|\\b(daily|hourly|weekly)\\b`,
  'i',
);
const DEFAULT_HOURS: Record<string, number> = { morning: 8, evening: 18, night: 21 };

function dayIndex(word: string): number {
  const w = word.toLowerCase().replace(/s$/, '');
  return DAYS.findIndex((d) => d.startsWith(w.slice(0, 3)));
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** "7 pm" → 19:00; "8" → 08:00; "noon" → 12:00. */
export function readClock(text: string): { hour: number; minute: number } | undefined {
  const t = text.trim().toLowerCase();
  if (t === 'noon') return { hour: 12, minute: 0 };
  if (t === 'midnight') return { hour: 0, minute: 0 };
  const match = /^(\d{1,2})(?:[:.](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?$/.exec(t);
  if (!match) return undefined;
  let hour = Number(match[1]);
  const minute = Number(match[2] ?? 0);
  const meridiem = match[3]?.replace(/\./g, '');
  if (minute > 59 || hour > 23 || (meridiem && (hour < 1 || hour > 12))) return undefined;
  if (meridiem === 'pm' && hour < 12) hour += 12;
  if (meridiem === 'am' && hour === 12) hour = 0;
  return { hour, minute };
}

function without(text: string, ...parts: (string | undefined)[]): string {
  let out = text;
  for (const part of parts) if (part) out = out.replace(part, ' ');
  return out.replace(/\s+/g, ' ').trim();
}

function recurring(sentence: string, now: Date, timeZone: string): ParsedSchedule | undefined | { error: string } {
  const match = RECURRENCE.exec(sentence);
  if (!match) return undefined;
  const [phrase, count, countUnit, singleUnit, dayList, dayWord, adverb] = match;
  const unit = countUnit ?? singleUnit ?? (adverb === 'hourly' ? 'hour' : undefined);
  if (unit) {
    const n = count ? Number(count) : 1;
    if (!(n > 0)) return { error: 'the interval must be at least 1' };
    const every_ms = n * UNITS[unit.toLowerCase()]!;
    if (every_ms < 10_000) return { error: 'reminders repeat at most every 10 seconds' };
    return { schedule: { kind: 'interval', every_ms, description: `every ${n === 1 ? unit : `${n} ${unit}s`}` }, rest: without(sentence, phrase) };
  }
  const timeMatch = AT_TIME.exec(sentence);
  const word = (dayWord ?? adverb ?? '').toLowerCase();
  const clock = timeMatch ? readClock(timeMatch[1]!) : { hour: DEFAULT_HOURS[word] ?? 9, minute: 0 };
  if (!clock) return { error: `I could not read the time "${timeMatch?.[1] ?? ''}"` };
  let dow: string;
  let days: string;
  if (dayList) {
    const indexes = [
      ...new Set(
        dayList
          .split(/\s*(?:,|and|&)\s*/i)
          .map(dayIndex)
          .filter((i) => i >= 0),
      ),
    ].sort();
    dow = indexes.join(',');
    days = indexes.map((i) => DAYS[i]![0]!.toUpperCase() + DAYS[i]!.slice(1)).join(', ');
  } else if (word === 'weekday') {
    dow = '1-5';
    days = 'weekday';
  } else if (word === 'weekend') {
    dow = '0,6';
    days = 'weekend day';
  } else if (word === 'week' || word === 'weekly') {
    const today = new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'long' }).format(now).toLowerCase();
    dow = String(DAYS.indexOf(today));
    days = today[0]!.toUpperCase() + today.slice(1);
  } else {
    dow = '*';
    days = 'day';
  }
  return {
    schedule: { kind: 'cron', pattern: `0 ${clock.minute} ${clock.hour} * * ${dow}`, description: `every ${days} at ${pad(clock.hour)}:${pad(clock.minute)}` },
    rest: without(sentence, phrase, timeMatch?.[0]),
  };
}

function once(sentence: string, now: Date, timeZone: string): ParsedSchedule | undefined | { error: string } {
  const reference = { instant: now, timezone: zoneOffsetMinutes(now.getTime(), timeZone) };
  const [result] = chrono.parse(sentence, reference, { forwardDate: true });
  if (!result) return undefined;
  const start = result.start;
  // A date without a time ("tomorrow", "on Friday") means the morning of that day.
  const timed = start.isCertain('hour');
  const at = instantOf(
    {
      year: start.get('year') ?? 1970,
      month: start.get('month') ?? 1,
      day: start.get('day') ?? 1,
      hour: timed ? (start.get('hour') ?? 9) : 9,
      minute: timed ? (start.get('minute') ?? 0) : 0,
      second: timed ? (start.get('second') ?? 0) : 0,
    },
    timeZone,
  );
  if (at <= now.getTime()) return { error: `${result.text} has already passed` };
  return { schedule: { kind: 'once', at }, rest: without(sentence, result.text) };
}

/** The schedule a phrase or sentence names, or undefined when it names none. */
export function parseSchedule(sentence: string, now: Date, timeZone: string): ParsedSchedule | undefined | { error: string } {
  const text = sentence.replace(/\s+/g, ' ').trim();
  return recurring(text, now, timeZone) ?? once(text, now, timeZone);
}

const LEAD =
  /^(?:(?:hey|ok|okay|please|could you|can you|would you)[\s,]+)*(?:remind\s+me|set\s+(?:a|up\s+a)?\s*reminder|reminder|remember)?[\s,:]*(?:(?:to|that|about|of|for)\s+)?/i;

/** What to be reminded of, from the words around the time phrase. */
export function reminderText(rest: string): string {
  let text = rest
    .replace(/\b(?:please\s+)?remind\s+me\b/i, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  text = text.replace(LEAD, '').replace(/^(?:to|that|about|of)\s+/i, '');
  return text
    .replace(/[\s,.;:!]+$/, '')
    .replace(/\s+(?:please|thanks|thank you)$/i, '')
    .trim();
}

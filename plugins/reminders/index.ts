// The built-in "reminders" plugin. One instance per load keeps a timer on the earliest due reminder;
// when it fires, each due reminder is claimed in SQLite and then delivered through the Core's notify
// (the user's last channel). Missed while HomeClaw was down: delivered late within late_grace_hours,
// else a one-time reminder is marked missed and a repeating one moves on to its next occurrence.
import { Cron } from 'croner';
import type { BuiltinContext, BuiltinInitContext, BuiltinNotify, BuiltinReturn } from '../../src/adapters/builtin-module.js';
import type { JsonObject } from '../../src/protocol/types.js';
import { parseSchedule, reminderText, type ParsedSchedule, type Schedule } from './parse.js';
import { ReminderStore, type Reminder } from './store.js';
import { describeInstant } from './zoned-time.js';

/** Timers are re-armed at least this often (clock changes, Node's timer limit). */
const MAX_TIMER_MS = 60 * 60 * 1000;
/** Later than this, a delivery says when the reminder was due. */
const LATE_NOTE_MS = 60_000;
const STOP_WORDS = new Set([
  'the',
  'a',
  'an',
  'my',
  'reminder',
  'reminders',
  'cancel',
  'delete',
  'remove',
  'stop',
  'about',
  'for',
  'to',
  'of',
  'please',
  'me',
  'that',
  'one',
]);

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The next firing strictly after `after`, or null for a one-time reminder. */
export function nextOccurrence(schedule: Schedule, timezone: string, dueAt: number, after: number): number | null {
  switch (schedule.kind) {
    case 'once':
      return null;
    case 'cron':
      return new Cron(schedule.pattern, { timezone, paused: true }).nextRun(new Date(after))?.getTime() ?? null;
    case 'interval':
      return dueAt + (Math.floor((after - dueAt) / schedule.every_ms) + 1) * schedule.every_ms;
  }
}

function describeSchedule(reminder: Pick<Reminder, 'schedule' | 'timezone' | 'next_at'>, now: number): string {
  const next = reminder.next_at === null ? '' : describeInstant(reminder.next_at, reminder.timezone, now);
  return reminder.schedule.kind === 'once' ? next : `${reminder.schedule.description} (next: ${next})`;
}

function view(reminder: Reminder, now: number): JsonObject {
  return {
    id: reminder.id,
    text: reminder.text,
    status: reminder.status,
    when: reminder.schedule.kind === 'once' ? 'once' : reminder.schedule.description,
    next_at: reminder.next_at === null ? null : new Date(reminder.next_at).toISOString(),
    timezone: reminder.timezone,
    description: describeSchedule(reminder, now),
  };
}

export class Reminders {
  private readonly store: ReminderStore;
  private readonly notify: BuiltinNotify;
  private readonly log: BuiltinInitContext['log'];
  private readonly graceMs: number;
  private timer: NodeJS.Timeout | undefined;
  private firing: Promise<void> | undefined;
  private disposed = false;

  constructor(init: BuiltinInitContext) {
    this.store = new ReminderStore(init.data_dir);
    this.notify = init.notify;
    this.log = init.log;
    const hours = init.config['late_grace_hours'];
    this.graceMs = (typeof hours === 'number' && hours >= 0 ? hours : 12) * 3_600_000;
    // What fell due while the Core was down is handled after a short pause, so the channel clients that
    // reconnect after a Core restart are back to receive it.
    const delay = init.config['startup_delay_sec'];
    this.arm((typeof delay === 'number' && delay >= 0 ? delay : 10) * 1000);
  }

  add(params: JsonObject, ctx: BuiltinContext): BuiltinReturn {
    const userId = text(params['user_id']);
    if (!userId) return { success: false, error: 'user_id is required' };
    const timezone = text(params['timezone']) ?? Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'UTC';
    const now = Date.now();
    const said = text(ctx.request.user_input);
    // A slash command's own words are not a reminder.
    const sentence = said && !said.startsWith('/') ? said : undefined;
    const givenText = text(params['text']);
    const when = text(params['when']);
    const sources = [when, givenText, sentence].filter((s): s is string => s !== undefined);
    let parsed: ParsedSchedule | undefined;
    let from: string | undefined;
    for (const source of sources) {
      const outcome = parseSchedule(source, new Date(now), timezone);
      if (outcome && 'error' in outcome) return { success: false, error: `I could not set that reminder: ${outcome.error}.` };
      if (outcome) {
        parsed = outcome;
        from = source;
        break;
      }
    }
    if (!parsed) {
      return {
        success: false,
        error: 'When should I remind you? Say e.g. "at 7 pm", "tomorrow at 8", "in 10 minutes" or "every Monday at 8".',
      };
    }
    // What to remind of: the text parameter when it is not itself the time phrase's sentence, else the
    // words around the time phrase.
    const what =
      from === givenText
        ? reminderText(parsed.rest)
        : (givenText ?? reminderText(from === when && sentence ? parseRest(sentence, now, timezone) : parsed.rest));
    if (!what) return { success: false, error: 'What should I remind you of?' };
    const nextAt = parsed.schedule.kind === 'once' ? parsed.schedule.at : nextOccurrence(parsed.schedule, timezone, now, now);
    if (nextAt === null) return { success: false, error: 'That schedule never fires.' };
    const reminder = this.store.add({
      user_id: userId,
      channel: text(params['channel']) ?? null,
      text: what,
      schedule: parsed.schedule,
      timezone,
      next_at: nextAt,
      now,
    });
    this.arm();
    return {
      text: `OK, I will remind you ${parsed.schedule.kind === 'once' ? `on ${describeSchedule(reminder, now)}` : describeSchedule(reminder, now)}: ${what} (reminder #${reminder.id}).`,
      data: view(reminder, now),
    };
  }

  list(params: JsonObject): BuiltinReturn {
    const userId = text(params['user_id']);
    if (!userId) return { success: false, error: 'user_id is required' };
    const now = Date.now();
    const open = this.store.listOpen(userId);
    if (open.length === 0) return { text: 'You have no reminders.', data: { reminders: [] } };
    const lines = open.map((r) => `#${r.id} ${r.status === 'missed' ? 'missed while HomeClaw was down' : describeSchedule(r, now)}: ${r.text}`);
    return { text: `Your reminders:\n${lines.join('\n')}`, data: { reminders: open.map((r) => view(r, now)) } };
  }

  cancel(params: JsonObject, ctx: BuiltinContext): BuiltinReturn {
    const userId = text(params['user_id']);
    if (!userId) return { success: false, error: 'user_id is required' };
    const said = text(ctx.request.user_input);
    const which = text(params['which']) ?? (said && !said.startsWith('/') ? said : undefined);
    const open = this.store.listOpen(userId);
    if (open.length === 0) return { text: 'You have no reminders to cancel.' };
    if (!which) return { success: false, error: 'Which reminder? Give its number or words of its text ("list" shows them).' };
    let chosen: Reminder[];
    const number = /#?\b(\d+)\b/.exec(which);
    if (/\ball\b/i.test(which)) chosen = open;
    else if (number) chosen = open.filter((r) => r.id === Number(number[1]));
    else {
      const words = which
        .toLowerCase()
        .split(/[^a-z0-9']+/)
        .filter((w) => w.length >= 3 && !STOP_WORDS.has(w));
      const scored = open.map((r) => ({ r, score: words.filter((w) => r.text.toLowerCase().includes(w)).length }));
      const best = Math.max(0, ...scored.map((s) => s.score));
      chosen = best === 0 ? [] : scored.filter((s) => s.score === best).map((s) => s.r);
    }
    if (chosen.length === 0) return { success: false, error: `You have no reminder matching "${which}".` };
    if (chosen.length > 1 && !/\ball\b/i.test(which)) {
      const now = Date.now();
      return {
        text: `Which one? ${chosen.map((r) => `#${r.id} ${describeSchedule(r, now)}: ${r.text}`).join('; ')}. Say e.g. "cancel reminder ${chosen[0]!.id}".`,
      };
    }
    const cancelled = chosen.filter((r) => this.store.cancel(r.id, userId));
    this.arm();
    return { text: `Cancelled: ${cancelled.map((r) => `#${r.id} ${r.text}`).join('; ')}.`, data: { cancelled: cancelled.map((r) => r.id) } };
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
    const close = (): void => this.store.close();
    if (this.firing) void this.firing.finally(close);
    else close();
  }

  /** Waits for the earliest due reminder (or `delay` when given: now). */
  private arm(delay?: number): void {
    if (this.disposed) return;
    clearTimeout(this.timer);
    const next = this.store.nextDue();
    if (next === undefined && delay === undefined) return;
    const wait = delay ?? Math.max(0, Math.min(MAX_TIMER_MS, next! - Date.now()));
    this.timer = setTimeout(() => {
      this.firing = this.fireDue().finally(() => {
        this.firing = undefined;
        this.arm();
      });
    }, wait);
    this.timer.unref();
  }

  private async fireDue(): Promise<void> {
    const now = Date.now();
    for (const reminder of this.store.due(now)) {
      if (this.disposed) return;
      const dueAt = reminder.next_at!;
      const lateness = now - dueAt;
      const next = nextOccurrence(reminder.schedule, reminder.timezone, dueAt, now);
      if (lateness > this.graceMs) {
        // Too late to be useful: a one-time reminder is kept as missed, a repeating one moves on.
        if (this.store.claim(reminder.id, dueAt, next, next === null ? 'missed' : 'active', false)) {
          this.log.warn({ reminder: reminder.id, user_id: reminder.user_id, due: new Date(dueAt).toISOString() }, 'reminder missed while HomeClaw was down');
        }
        continue;
      }
      // Claim first: if the Core dies between this and the delivery, the reminder is lost, never doubled.
      if (!this.store.claim(reminder.id, dueAt, next)) continue;
      const late = lateness > LATE_NOTE_MS ? ` (was due ${describeInstant(dueAt, reminder.timezone, now)})` : '';
      const outcome = await this.notify({
        user_id: reminder.user_id,
        text: `Reminder${late}: ${reminder.text}`,
        ...(reminder.channel ? { fallback_channel: reminder.channel } : {}),
      });
      if (outcome.ok) this.log.info({ reminder: reminder.id, channel: outcome.channel }, 'reminder delivered');
      else this.log.warn({ reminder: reminder.id, user_id: reminder.user_id, error: outcome.error }, 'reminder not delivered');
    }
  }
}

/** The words of a sentence around its time phrase (when the time came from another parameter). */
function parseRest(sentence: string, now: number, timezone: string): string {
  const outcome = parseSchedule(sentence, new Date(now), timezone);
  return outcome && !('error' in outcome) ? outcome.rest : sentence;
}

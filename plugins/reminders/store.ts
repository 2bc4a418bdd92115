// Reminders in SQLite (<plugin data dir>/reminders.db). A reminder fires by CLAIMING its due time first:
// one UPDATE moves next_at forward (or marks a one-time reminder done) only if next_at is still the due
// time, so whoever wins delivers and nobody delivers twice, even across a crash or two instances.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Schedule } from './parse.js';

export type ReminderStatus = 'active' | 'done' | 'cancelled' | 'missed';

export interface Reminder {
  id: number;
  user_id: string;
  /** The channel it was set on: where it goes when the user has no last channel. */
  channel: string | null;
  text: string;
  schedule: Schedule;
  timezone: string;
  /** Epoch ms of the next firing; null once done, cancelled or missed. */
  next_at: number | null;
  status: ReminderStatus;
  created_at: number;
  fired_count: number;
}

interface Row {
  id: number;
  user_id: string;
  channel: string | null;
  text: string;
  schedule_json: string;
  timezone: string;
  next_at: number | null;
  status: ReminderStatus;
  created_at: number;
  fired_count: number;
}

function fromRow(row: Row): Reminder {
  const { schedule_json, ...rest } = row;
  return { ...rest, schedule: JSON.parse(schedule_json) as Schedule };
}

export class ReminderStore {
  private readonly db: Database.Database;

  constructor(dataDir: string) {
    this.db = new Database(join(dataDir, 'reminders.db'));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`CREATE TABLE IF NOT EXISTS reminders (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id TEXT NOT NULL,
      channel TEXT,
      text TEXT NOT NULL,
      schedule_json TEXT NOT NULL,
      timezone TEXT NOT NULL,
      next_at INTEGER,
      status TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      fired_count INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX IF NOT EXISTS reminders_due ON reminders (status, next_at);
    CREATE INDEX IF NOT EXISTS reminders_user ON reminders (user_id, status);`);
  }

  add(input: { user_id: string; channel: string | null; text: string; schedule: Schedule; timezone: string; next_at: number; now: number }): Reminder {
    const info = this.db
      .prepare(
        `INSERT INTO reminders (user_id, channel, text, schedule_json, timezone, next_at, status, created_at)
         VALUES (?, ?, ?, ?, ?, ?, 'active', ?)`,
      )
      .run(input.user_id, input.channel, input.text, JSON.stringify(input.schedule), input.timezone, input.next_at, input.now);
    return this.get(Number(info.lastInsertRowid))!;
  }

  get(id: number): Reminder | undefined {
    const row = this.db.prepare('SELECT * FROM reminders WHERE id = ?').get(id) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** The user's reminders that are still to come or were missed, oldest first. */
  listOpen(userId: string): Reminder[] {
    const rows = this.db
      .prepare(`SELECT * FROM reminders WHERE user_id = ? AND status IN ('active', 'missed') ORDER BY status, next_at, id`)
      .all(userId) as Row[];
    return rows.map(fromRow);
  }

  /** Active reminders due at or before `now`. */
  due(now: number): Reminder[] {
    const rows = this.db.prepare(`SELECT * FROM reminders WHERE status = 'active' AND next_at <= ? ORDER BY next_at, id`).all(now) as Row[];
    return rows.map(fromRow);
  }

  /** The earliest next_at of an active reminder. */
  nextDue(): number | undefined {
    const row = this.db.prepare(`SELECT MIN(next_at) AS next FROM reminders WHERE status = 'active'`).get() as { next: number | null };
    return row.next ?? undefined;
  }

  /**
   * Takes the firing due at `dueAt`: the next one becomes `next` (null: done) and true is returned, or
   * false when someone else already took it (or the reminder was cancelled meanwhile).
   */
  claim(id: number, dueAt: number, next: number | null, status: ReminderStatus = next === null ? 'done' : 'active', fired = true): boolean {
    return (
      this.db
        .prepare(`UPDATE reminders SET next_at = ?, status = ?, fired_count = fired_count + ? WHERE id = ? AND status = 'active' AND next_at = ?`)
        .run(next, status, fired ? 1 : 0, id, dueAt).changes === 1
    );
  }

  cancel(id: number, userId: string): boolean {
    return (
      this.db
        .prepare(`UPDATE reminders SET status = 'cancelled', next_at = NULL WHERE id = ? AND user_id = ? AND status IN ('active', 'missed')`)
        .run(id, userId).changes === 1
    );
  }

  close(): void {
    this.db.close();
  }
}

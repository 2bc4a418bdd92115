// The audit log: who invoked what, through which channel, with which outcome and how long it took —
// never parameter values (they carry addresses, messages, codes). Entries are buffered and written in
// one transaction per batch: in WAL mode every commit is a sync to disk, which one write per invocation
// would pay on the hot path. Retention keeps the table bounded by count and by age.
//
// The table has no secondary index on purpose: an index roughly doubles the cost of every insert, paid
// per invocation, while the readers (an admin's query, the age sweep) are rare and scan at most
// max_entries rows newest-first by primary key.
import type Database from 'better-sqlite3';
import type { InvocationAudit } from '../dispatch/dispatcher-api.js';
import type { InvocationEventBus } from '../dispatch/invocation-events.js';
import type { Logger } from '../log.js';

export interface AuditEntry {
  id: number;
  ts: number;
  user_id: string | null;
  channel: string | null;
  plugin_id: string;
  capability_id: string;
  outcome: string;
  duration_ms: number;
}

export interface AuditQuery {
  user?: string;
  plugin?: string;
  channel?: string;
  outcome?: string;
  /** Milliseconds since the epoch, inclusive. */
  since?: number;
  until?: number;
  /** Newest first; default 100. */
  limit?: number;
}

export interface AuditLogOptions {
  db: Database.Database;
  log: Logger;
  max_entries: number;
  max_age_days: number;
  flush_interval_ms: number;
  /** Buffered entries that trigger an immediate flush. */
  batch_size?: number;
  now?: () => number;
}

export const MAX_AUDIT_QUERY_LIMIT = 10_000;
const DAY_MS = 86_400_000;
/** The age sweep scans the table, so it runs at most this often (the count cap applies on every flush). */
const AGE_SWEEP_INTERVAL_MS = 60_000;

export class AuditLog {
  private buffer: InvocationAudit[] = [];
  private timer: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private readonly insert: Database.Statement;
  private readonly now: () => number;
  private written = 0;
  private dropped = 0;
  private lastFailure: string | undefined;
  private lastAgeSweep = 0;
  /** The newest entry of each plugin, kept once someone asked for it (see lastPerPlugin). */
  private newestByPlugin: Map<string, AuditEntry> | undefined;
  private unfollow: (() => void) | undefined;

  constructor(private readonly options: AuditLogOptions) {
    this.now = options.now ?? Date.now;
    options.db.exec(`
      CREATE TABLE IF NOT EXISTS audit_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts INTEGER NOT NULL,
        user_id TEXT,
        channel TEXT,
        plugin_id TEXT NOT NULL,
        capability_id TEXT NOT NULL,
        outcome TEXT NOT NULL,
        duration_ms INTEGER NOT NULL
      );
    `);
    this.insert = options.db.prepare(
      'INSERT INTO audit_log (ts, user_id, channel, plugin_id, capability_id, outcome, duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
  }

  /** Never throws and never waits: the entry is written with the next batch. */
  record(entry: InvocationAudit): void {
    this.buffer.push(entry);
    if (this.buffer.length >= (this.options.batch_size ?? 1000)) {
      // Written right after the current work, not inside the invocation that filled the batch.
      if (!this.immediate) this.immediate = setImmediate(() => void this.flush());
      return;
    }
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.options.flush_interval_ms);
      this.timer.unref();
    }
  }

  /** Writes the buffered entries, then applies retention. A failed write (disk full) is logged, not thrown. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    if (this.immediate) clearImmediate(this.immediate);
    this.timer = undefined;
    this.immediate = undefined;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    try {
      const write = this.options.db.transaction((entries: InvocationAudit[]) => {
        for (const e of entries) {
          const duration_ms = Math.max(0, Math.round(e.duration_ms));
          const { lastInsertRowid } = this.insert.run(e.ts, e.user_id ?? null, e.channel ?? null, e.plugin_id, e.capability_id, e.outcome, duration_ms);
          this.newestByPlugin?.set(e.plugin_id, {
            id: Number(lastInsertRowid),
            ts: e.ts,
            user_id: e.user_id ?? null,
            channel: e.channel ?? null,
            plugin_id: e.plugin_id,
            capability_id: e.capability_id,
            outcome: e.outcome,
            duration_ms,
          });
        }
      });
      write(batch);
      this.written += batch.length;
      this.lastFailure = undefined;
      this.applyRetention();
    } catch (err) {
      this.dropped += batch.length;
      this.lastFailure = (err as Error).message;
      this.options.log.error({ err, entries: batch.length }, 'audit entries could not be written');
    }
  }

  /** Deletes entries beyond max_entries (the oldest) and, at most once a minute, those older than max_age_days. */
  applyRetention(): void {
    const db = this.options.db;
    const now = this.now();
    if (now - this.lastAgeSweep >= AGE_SWEEP_INTERVAL_MS) {
      this.lastAgeSweep = now;
      db.prepare('DELETE FROM audit_log WHERE ts < ?').run(now - this.options.max_age_days * DAY_MS);
    }
    const newest = db.prepare('SELECT MAX(id) AS id FROM audit_log').get() as { id: number | null };
    // AUTOINCREMENT ids only grow, so "the newest max_entries" is an id range: no count or sort needed.
    if (newest.id !== null) db.prepare('DELETE FROM audit_log WHERE id <= ?').run(newest.id - this.options.max_entries);
  }

  query(filter: AuditQuery = {}): AuditEntry[] {
    const where: string[] = [];
    const values: (string | number)[] = [];
    const add = (clause: string, value: string | number | undefined): void => {
      if (value === undefined) return;
      where.push(clause);
      values.push(value);
    };
    add('user_id = ?', filter.user);
    add('plugin_id = ?', filter.plugin);
    add('channel = ?', filter.channel);
    add('outcome = ?', filter.outcome);
    add('ts >= ?', filter.since);
    add('ts <= ?', filter.until);
    const limit = Math.min(Math.max(1, filter.limit ?? 100), MAX_AUDIT_QUERY_LIMIT);
    const sql = `SELECT * FROM audit_log ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ${limit}`;
    return this.options.db.prepare(sql).all(...values) as AuditEntry[];
  }

  /**
   * The newest entry of each plugin, newest first, for a dashboard's "last outcome" column. The first
   * call reads the table once (one pass over at most max_entries rows: ~50 ms at 100,000); from then on
   * every write keeps the answer current, so later calls cost a sort of one entry per plugin.
   */
  lastPerPlugin(): AuditEntry[] {
    if (!this.newestByPlugin) {
      const sql = 'SELECT a.* FROM audit_log a JOIN (SELECT MAX(id) AS id FROM audit_log GROUP BY plugin_id) newest ON a.id = newest.id';
      const rows = this.options.db.prepare(sql).all() as AuditEntry[];
      this.newestByPlugin = new Map(rows.map((row) => [row.plugin_id, row]));
    }
    return [...this.newestByPlugin.values()].sort((a, b) => b.id - a.id);
  }

  status(): { entries: number; buffered: number; written: number; dropped: number; last_failure?: string } {
    const entries = (this.options.db.prepare('SELECT COUNT(*) AS n FROM audit_log').get() as { n: number }).n;
    return {
      entries,
      buffered: this.buffer.length,
      written: this.written,
      dropped: this.dropped,
      ...(this.lastFailure ? { last_failure: this.lastFailure } : {}),
    };
  }

  /** Records every invocation the bus reports as finished, run or refused, until stop(). */
  follow(events: InvocationEventBus): void {
    this.unfollow?.();
    this.unfollow = events.on('invocation.finished', ({ audit }) => this.record(audit));
  }

  async stop(): Promise<void> {
    this.unfollow?.();
    this.unfollow = undefined;
    await this.flush();
  }
}

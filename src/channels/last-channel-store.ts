// Where each user last spoke (channel and session), in SQLite so a reminder after a restart still finds
// them. Written on every user message; read when something must reach a user outside a request.
import type Database from 'better-sqlite3';

export interface LastChannel {
  channel: string;
  session_id: string;
  at: number;
}

export class SqliteLastChannelStore {
  private readonly upsert: Database.Statement<[string, string, string, number]>;
  private readonly select: Database.Statement<[string], { channel: string; session_id: string; updated_at: number }>;

  constructor(
    db: Database.Database,
    private readonly now: () => number = Date.now,
  ) {
    db.exec(`CREATE TABLE IF NOT EXISTS last_channels (
      user_id TEXT PRIMARY KEY,
      channel TEXT NOT NULL,
      session_id TEXT NOT NULL,
      updated_at INTEGER NOT NULL
    )`);
    this.upsert = db.prepare(
      `INSERT INTO last_channels (user_id, channel, session_id, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET channel = excluded.channel, session_id = excluded.session_id, updated_at = excluded.updated_at`,
    );
    this.select = db.prepare('SELECT channel, session_id, updated_at FROM last_channels WHERE user_id = ?');
  }

  remember(userId: string, channel: string, sessionId: string): void {
    this.upsert.run(userId, channel, sessionId, this.now());
  }

  get(userId: string): LastChannel | undefined {
    const row = this.select.get(userId);
    return row ? { channel: row.channel, session_id: row.session_id, at: row.updated_at } : undefined;
  }
}

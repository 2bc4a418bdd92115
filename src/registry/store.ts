// SQLite persistence of plugin records: nothing registered is lost on restart.
import type { Database, Statement } from 'better-sqlite3';
import type { PluginDescriptor } from '../protocol/types.js';
import type { PluginRecord, PluginState } from './record.js';

interface Row {
  id: string;
  descriptor: string;
  owner: string;
  state: PluginState;
  state_reason: string | null;
  epoch: number | null;
  heartbeat_interval_sec: number | null;
  content_hash: string;
  registered_at: number;
  updated_at: number;
}

export class RegistryStore {
  /** Prepared once: preparing a statement costs more than running it, and a burst registers hundreds. */
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly db: Database) {
    db.exec(`CREATE TABLE IF NOT EXISTS plugins (
      id TEXT PRIMARY KEY,
      descriptor TEXT NOT NULL,
      owner TEXT NOT NULL,
      state TEXT NOT NULL,
      state_reason TEXT,
      epoch INTEGER,
      heartbeat_interval_sec REAL,
      content_hash TEXT NOT NULL,
      registered_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    )`);
  }

  loadAll(): PluginRecord[] {
    const rows = this.db.prepare('SELECT * FROM plugins ORDER BY id').all() as Row[];
    return rows.map((row) => ({
      descriptor: JSON.parse(row.descriptor) as PluginDescriptor,
      owner: row.owner,
      state: row.state,
      ...(row.state_reason !== null ? { state_reason: row.state_reason } : {}),
      ...(row.epoch !== null ? { epoch: row.epoch } : {}),
      ...(row.heartbeat_interval_sec !== null ? { heartbeat_interval_sec: row.heartbeat_interval_sec } : {}),
      content_hash: row.content_hash,
      registered_at: row.registered_at,
      updated_at: row.updated_at,
    }));
  }

  save(record: PluginRecord): void {
    this.statement(
      `INSERT INTO plugins (id, descriptor, owner, state, state_reason, epoch, heartbeat_interval_sec, content_hash, registered_at, updated_at)
       VALUES (@id, @descriptor, @owner, @state, @state_reason, @epoch, @heartbeat_interval_sec, @content_hash, @registered_at, @updated_at)
       ON CONFLICT(id) DO UPDATE SET descriptor=excluded.descriptor, owner=excluded.owner, state=excluded.state,
         state_reason=excluded.state_reason, epoch=excluded.epoch, heartbeat_interval_sec=excluded.heartbeat_interval_sec,
         content_hash=excluded.content_hash, updated_at=excluded.updated_at`,
    ).run({
      id: record.descriptor.id,
      descriptor: JSON.stringify(record.descriptor),
      owner: record.owner,
      state: record.state,
      state_reason: record.state_reason ?? null,
      epoch: record.epoch ?? null,
      heartbeat_interval_sec: record.heartbeat_interval_sec ?? null,
      content_hash: record.content_hash,
      registered_at: record.registered_at,
      updated_at: record.updated_at,
    });
  }

  saveState(id: string, state: PluginState, reason: string | undefined, updatedAt: number): void {
    this.statement('UPDATE plugins SET state = ?, state_reason = ?, updated_at = ? WHERE id = ?').run(state, reason ?? null, updatedAt, id);
  }

  delete(id: string): void {
    this.statement('DELETE FROM plugins WHERE id = ?').run(id);
  }

  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

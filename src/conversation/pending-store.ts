// Pending plugin calls per session (a call waiting for the user's answer to a question), in SQLite so a question asked before a restart can still
// be answered after it. Each call carries its own expiry; an expired call is gone the moment anyone asks
// for it, so a "yes" hours later can never place a forgotten order.
import type Database from 'better-sqlite3';
import type { JsonObject } from '../protocol/types.js';
import type { PendingCall, PendingCallStore, SessionKey } from './resolver-api.js';

export type Clock = () => number;

export interface SqlitePendingCallStoreOptions {
  db: Database.Database;
  /** Milliseconds since the Unix epoch; injected so tests can move time. */
  now?: Clock;
}

interface Row {
  call_json: string;
  expires_at: number;
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

/** Checks a stored row still has the PendingCall shape; a damaged row is treated as absent. */
function parsePendingCall(text: string): PendingCall | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const call = value as Record<string, unknown>;
  const ok =
    typeof call.plugin_id === 'string' &&
    typeof call.capability_id === 'string' &&
    typeof call.explicit === 'object' &&
    call.explicit !== null &&
    !Array.isArray(call.explicit) &&
    isStringArray(call.confirmed) &&
    isStringArray(call.missing) &&
    isStringArray(call.uncertain) &&
    typeof call.question === 'string' &&
    typeof call.user_input === 'string' &&
    typeof call.created_at === 'number' &&
    typeof call.expires_at === 'number';
  return ok ? (call as unknown as PendingCall) : undefined;
}

export class SqlitePendingCallStore implements PendingCallStore {
  private readonly db: Database.Database;
  private readonly now: Clock;
  private readonly selectStatement: Database.Statement<[string, string, string], Row>;
  private readonly upsertStatement: Database.Statement<[string, string, string, string, number]>;
  private readonly deleteStatement: Database.Statement<[string, string, string]>;
  private readonly purgeStatement: Database.Statement<[number]>;

  constructor(options: SqlitePendingCallStoreOptions) {
    this.db = options.db;
    this.now = options.now ?? Date.now;
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS pending_calls (
        channel TEXT NOT NULL,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        call_json TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        PRIMARY KEY (channel, user_id, session_id)
      );
      CREATE INDEX IF NOT EXISTS pending_calls_expiry ON pending_calls (expires_at);
    `);
    this.selectStatement = this.db.prepare('SELECT call_json, expires_at FROM pending_calls WHERE channel = ? AND user_id = ? AND session_id = ?');
    this.upsertStatement = this.db.prepare(
      `INSERT INTO pending_calls (channel, user_id, session_id, call_json, expires_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (channel, user_id, session_id) DO UPDATE SET call_json = excluded.call_json, expires_at = excluded.expires_at`,
    );
    this.deleteStatement = this.db.prepare('DELETE FROM pending_calls WHERE channel = ? AND user_id = ? AND session_id = ?');
    this.purgeStatement = this.db.prepare('DELETE FROM pending_calls WHERE expires_at <= ?');
  }

  get(key: SessionKey): PendingCall | undefined {
    const row = this.selectStatement.get(key.channel, key.user_id, key.session_id);
    if (!row) return undefined;
    const call = row.expires_at > this.now() ? parsePendingCall(row.call_json) : undefined;
    if (!call) this.clear(key);
    return call;
  }

  set(key: SessionKey, call: PendingCall): void {
    this.upsertStatement.run(key.channel, key.user_id, key.session_id, JSON.stringify(call), call.expires_at);
  }

  clear(key: SessionKey): void {
    this.deleteStatement.run(key.channel, key.user_id, key.session_id);
  }

  /** Deletes every expired call; returns how many. Optional housekeeping — get() never returns one anyway. */
  purgeExpired(): number {
    return this.purgeStatement.run(this.now()).changes;
  }
}

export interface NewPendingCall {
  plugin_id: string;
  capability_id: string;
  explicit: JsonObject;
  confirmed?: string[];
  missing: string[];
  uncertain: string[];
  question: string;
  user_input: string;
}

/** Stamps a pending call with its creation time and expiry (ttlSec from conversation.pending_ttl_sec). */
export function newPendingCall(fields: NewPendingCall, now: number, ttlSec: number): PendingCall {
  return {
    ...fields,
    confirmed: fields.confirmed ?? [],
    created_at: now,
    expires_at: now + Math.max(0, ttlSec) * 1000,
  };
}

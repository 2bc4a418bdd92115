// Per-user HTTP tokens. A token is shown once, at creation; only its SHA-256 is stored. A salted slow hash
// (as for MQTT passwords) buys nothing here: the token is 256 random bits, so nobody can brute-force it
// from its hash, and a plain digest lets every request be checked with one indexed lookup.
import { createHash, randomBytes } from 'node:crypto';
import type Database from 'better-sqlite3';
import { guardDiskFull } from '../kit/disk-full.js';
import { explainBadUserId, isUserId } from './user-id.js';

/** Recognisable in logs and by secret scanners, and never mistaken for the admin token. */
export const USER_TOKEN_PREFIX = 'hcu_';
const TOKEN_BYTES = 32;

export interface UserInfo {
  user_id: string;
  created_at: number;
  /** When the token was last accepted (updated at most once a minute). */
  last_used_at: number | null;
}

export interface NewUserToken {
  user_id: string;
  /** Shown once; only its hash is stored. */
  token: string;
}

/** A user-facing failure: bad input (400), a duplicate (409) or an unknown user (404). */
export class UserTokenError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 404 | 409,
  ) {
    super(message);
  }
}

interface Row {
  user_id: string;
  token_sha256: string;
  created_at: number;
  last_used_at: number | null;
}

const LAST_USED_RESOLUTION_MS = 60_000;

/** The SHA-256 (hex) a token is stored and compared as. */
export function tokenDigest(token: string): string {
  return digest(token);
}

function digest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function newToken(): string {
  return `${USER_TOKEN_PREFIX}${randomBytes(TOKEN_BYTES).toString('base64url')}`;
}

export class UserTokenStore {
  private readonly byDigest: Database.Statement<[string], Row>;
  private readonly byUser: Database.Statement<[string], Row>;

  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number = Date.now,
  ) {
    db.exec(`CREATE TABLE IF NOT EXISTS user_tokens (
      user_id TEXT PRIMARY KEY,
      token_sha256 TEXT NOT NULL UNIQUE,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER
    )`);
    this.byDigest = db.prepare('SELECT * FROM user_tokens WHERE token_sha256 = ?');
    this.byUser = db.prepare('SELECT * FROM user_tokens WHERE user_id = ?');
  }

  add(userId: unknown): NewUserToken {
    if (!isUserId(userId)) throw new UserTokenError(explainBadUserId(userId), 400);
    if (this.byUser.get(userId)) {
      throw new UserTokenError(`user "${userId}" already has a token; remove it first or rotate it`, 409);
    }
    const token = newToken();
    guardDiskFull(`storing the token of user ${userId}`, () =>
      this.db.prepare('INSERT INTO user_tokens (user_id, token_sha256, created_at) VALUES (?, ?, ?)').run(userId, digest(token), this.now()),
    );
    return { user_id: userId, token };
  }

  /** A new token for an existing user; the old one stops working at once. */
  rotate(userId: unknown): NewUserToken {
    if (!isUserId(userId)) throw new UserTokenError(explainBadUserId(userId), 400);
    const token = newToken();
    const changed = guardDiskFull(`rotating the token of user ${userId}`, () =>
      this.db.prepare('UPDATE user_tokens SET token_sha256 = ?, created_at = ?, last_used_at = NULL WHERE user_id = ?').run(digest(token), this.now(), userId),
    );
    if (changed.changes === 0) throw new UserTokenError(`no user "${userId}"; add it with: homeclaw users add ${userId}`, 404);
    return { user_id: userId, token };
  }

  remove(userId: unknown): void {
    if (!isUserId(userId)) throw new UserTokenError(explainBadUserId(userId), 400);
    const changed = guardDiskFull(`removing user ${userId}`, () => this.db.prepare('DELETE FROM user_tokens WHERE user_id = ?').run(userId));
    if (changed.changes === 0) throw new UserTokenError(`no user "${userId}"`, 404);
  }

  /** The user a token belongs to, or undefined. Never throws (a failed bookkeeping write is ignored). */
  verify(token: string): string | undefined {
    if (!token.startsWith(USER_TOKEN_PREFIX)) return undefined;
    const row = this.byDigest.get(digest(token));
    if (!row) return undefined;
    const now = this.now();
    if (row.last_used_at === null || now - row.last_used_at > LAST_USED_RESOLUTION_MS) {
      try {
        this.db.prepare('UPDATE user_tokens SET last_used_at = ? WHERE user_id = ?').run(now, row.user_id);
      } catch {
        // Only bookkeeping: a full disk must not lock users out.
      }
    }
    return row.user_id;
  }

  /** The digest of the user's current token; it changes on rotate and disappears on remove. */
  currentDigest(userId: string): string | undefined {
    return this.byUser.get(userId)?.token_sha256;
  }

  list(): UserInfo[] {
    const rows = this.db.prepare('SELECT * FROM user_tokens ORDER BY user_id').all() as Row[];
    return rows.map((row) => ({ user_id: row.user_id, created_at: row.created_at, last_used_at: row.last_used_at }));
  }

  count(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM user_tokens').get() as { n: number }).n;
  }
}

// Per-user tokens: shown once, stored as a digest, verified by one lookup; bad ids, duplicates and
// unknown users are clear errors that change nothing.
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserTokenError, UserTokenStore } from '../../src/access/user-tokens.js';

let db: Database.Database;
let clock: number;
let store: UserTokenStore;

beforeEach(() => {
  db = new Database(':memory:');
  clock = 1_000_000;
  store = new UserTokenStore(db, () => clock);
});
afterEach(() => db.close());

describe('UserTokenStore', () => {
  it('adds a user with a token that verifies, storing only its SHA-256', () => {
    const { user_id, token } = store.add('alice');
    expect(user_id).toBe('alice');
    expect(token).toMatch(/^hcu_[A-Za-z0-9_-]{43}$/);
    expect(store.verify(token)).toBe('alice');
    const rows = db.prepare('SELECT * FROM user_tokens').all();
    expect(JSON.stringify(rows)).not.toContain(token);
    expect(store.list()).toEqual([{ user_id: 'alice', created_at: 1_000_000, last_used_at: 1_000_000 }]);
  });

  it('refuses wrong, truncated and foreign tokens', () => {
    const { token } = store.add('alice');
    expect(store.verify(token.slice(0, -1))).toBeUndefined();
    expect(store.verify(`${token}x`)).toBeUndefined();
    expect(store.verify(token.replace('hcu_', 'xyz_'))).toBeUndefined();
    expect(store.verify('')).toBeUndefined();
  });

  it('bad ids, duplicates and unknown users are errors with a status; nothing changes', () => {
    const expectError = (fn: () => unknown, status: number, message: RegExp): void => {
      try {
        fn();
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(UserTokenError);
        expect((err as UserTokenError).status).toBe(status);
        expect((err as Error).message).toMatch(message);
      }
    };
    store.add('alice');
    expectError(() => store.add('alice'), 409, /"alice" already has a token/);
    expectError(() => store.add('not valid!'), 400, /user id "not valid!" must match/);
    expectError(() => store.add(''), 400, /must not be empty/);
    expectError(() => store.add(42), 400, /must be a string/);
    expectError(() => store.remove('bob'), 404, /no user "bob"/);
    expectError(() => store.rotate('bob'), 404, /no user "bob"/);
    expect(store.list().map((u) => u.user_id)).toEqual(['alice']);
  });

  it('rotate replaces the token; remove revokes it', () => {
    const first = store.add('alice').token;
    const second = store.rotate('alice').token;
    expect(second).not.toBe(first);
    expect(store.verify(first)).toBeUndefined();
    expect(store.verify(second)).toBe('alice');
    store.remove('alice');
    expect(store.verify(second)).toBeUndefined();
    expect(store.count()).toBe(0);
  });

  it('records last use at most once a minute', () => {
    const { token } = store.add('alice');
    store.verify(token);
    clock += 30_000;
    store.verify(token);
    expect(store.list()[0]!.last_used_at).toBe(1_000_000);
    clock += 40_000;
    store.verify(token);
    expect(store.list()[0]!.last_used_at).toBe(1_070_000);
  });
});

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newPendingCall, SqlitePendingCallStore } from '../../src/conversation/pending-store.js';
import type { SessionKey } from '../../src/conversation/resolver-api.js';

const alice: SessionKey = { channel: 'cli', user_id: 'alice', session_id: 's1' };
const bob: SessionKey = { channel: 'cli', user_id: 'bob', session_id: 's1' };

function call(now: number, ttlSec = 60, item = 'milk') {
  return newPendingCall(
    {
      plugin_id: 'buy',
      capability_id: 'place_order',
      explicit: { item },
      missing: ['phone'],
      uncertain: ['address'],
      question: 'What is your phone?',
      user_input: `buy ${item}`,
    },
    now,
    ttlSec,
  );
}

describe('SqlitePendingCallStore', () => {
  let dir: string;
  let db: Database.Database;
  let clock: number;
  let store: SqlitePendingCallStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'homeclaw-pending-'));
    db = new Database(join(dir, 'core.db'));
    clock = 1_000_000;
    store = new SqlitePendingCallStore({ db, now: () => clock });
  });

  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores, returns and clears a call per session', () => {
    const pending = call(clock);
    store.set(alice, pending);
    expect(store.get(alice)).toEqual(pending);
    expect(store.get(bob)).toBeUndefined();
    expect(store.get({ ...alice, session_id: 's2' })).toBeUndefined();
    expect(store.get({ ...alice, channel: 'web' })).toBeUndefined();
    store.clear(alice);
    expect(store.get(alice)).toBeUndefined();
  });

  it('replaces the call of the same session', () => {
    store.set(alice, call(clock, 60, 'milk'));
    store.set(alice, call(clock, 60, 'bread'));
    expect(store.get(alice)?.explicit).toEqual({ item: 'bread' });
    expect(db.prepare('SELECT COUNT(*) AS n FROM pending_calls').get()).toEqual({ n: 1 });
  });

  it('forgets a call once its TTL has passed, and deletes the row', () => {
    store.set(alice, call(clock, 60));
    expect(call(clock, 60).expires_at).toBe(clock + 60_000);
    clock += 59_999;
    expect(store.get(alice)).toBeDefined();
    clock += 1;
    expect(store.get(alice)).toBeUndefined();
    expect(db.prepare('SELECT COUNT(*) AS n FROM pending_calls').get()).toEqual({ n: 0 });
  });

  it('purges expired calls of every session', () => {
    store.set(alice, call(clock, 10));
    store.set(bob, call(clock, 100));
    clock += 50_000;
    expect(store.purgeExpired()).toBe(1);
    expect(store.get(bob)).toBeDefined();
  });

  it('survives a reopen of the database (a Core restart)', () => {
    store.set(alice, call(clock));
    db.close();
    db = new Database(join(dir, 'core.db'));
    const reopened = new SqlitePendingCallStore({ db, now: () => clock });
    expect(reopened.get(alice)?.question).toBe('What is your phone?');
  });

  it('treats a damaged row as absent and removes it', () => {
    store.set(alice, call(clock));
    db.prepare('UPDATE pending_calls SET call_json = \'{"plugin_id": 3}\'').run();
    expect(store.get(alice)).toBeUndefined();
    expect(db.prepare('SELECT COUNT(*) AS n FROM pending_calls').get()).toEqual({ n: 0 });
  });
});

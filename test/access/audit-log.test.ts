// The audit log: batched writes, filters, newest first, retention by count and age, and a failed write
// (disk full) that is logged instead of thrown into the invocation path.
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/access/audit-log.js';
import type { InvocationAudit } from '../../src/dispatch/dispatcher-api.js';
import { silentLogger } from '../../src/log.js';

let db: Database.Database;
let clock: number;
const entry = (over: Partial<InvocationAudit> = {}): InvocationAudit => ({
  ts: clock,
  plugin_id: 'lock',
  capability_id: 'unlock',
  outcome: 'ok',
  duration_ms: 3.4,
  ...over,
});
const make = (over: Partial<ConstructorParameters<typeof AuditLog>[0]> = {}) =>
  new AuditLog({ db, log: silentLogger(), max_entries: 1000, max_age_days: 30, flush_interval_ms: 20, now: () => clock, ...over });

beforeEach(() => {
  db = new Database(':memory:');
  clock = Date.UTC(2026, 10, 26, 12);
});
afterEach(() => db.close());

describe('AuditLog', () => {
  it('buffers entries and writes them together on flush or after the interval', async () => {
    const audit = make();
    audit.record(entry({ user_id: 'alice', channel: 'home' }));
    expect(audit.query()).toEqual([]);
    expect(audit.status()).toMatchObject({ buffered: 1, entries: 0 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(audit.query()).toEqual([
      { id: 1, ts: clock, user_id: 'alice', channel: 'home', plugin_id: 'lock', capability_id: 'unlock', outcome: 'ok', duration_ms: 3 },
    ]);
  });

  it('flushes right after the current work when a batch is full, not after the interval', async () => {
    const audit = make({ batch_size: 3, flush_interval_ms: 60_000 });
    for (let i = 0; i < 3; i++) audit.record(entry());
    expect(audit.status().entries).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(audit.status().entries).toBe(3);
  });

  it('filters by user, plugin, channel, outcome and time; newest first; limited', async () => {
    const audit = make();
    audit.record(entry({ user_id: 'alice', channel: 'home' }));
    clock += 1000;
    audit.record(entry({ user_id: 'kid', channel: 'home', outcome: 'forbidden' }));
    clock += 1000;
    audit.record(entry({ plugin_id: 'time', capability_id: 'now', channel: 'http' }));
    await audit.flush();
    expect(audit.query().map((e) => e.id)).toEqual([3, 2, 1]);
    expect(audit.query({ user: 'kid' }).map((e) => e.outcome)).toEqual(['forbidden']);
    expect(audit.query({ plugin: 'time' })).toHaveLength(1);
    expect(audit.query({ channel: 'home', outcome: 'ok' }).map((e) => e.user_id)).toEqual(['alice']);
    expect(audit.query({ since: clock - 1000 }).map((e) => e.id)).toEqual([3, 2]);
    expect(audit.query({ until: clock - 2000 }).map((e) => e.id)).toEqual([1]);
    expect(audit.query({ limit: 1 }).map((e) => e.id)).toEqual([3]);
    expect(audit.query({ user: "x' OR '1'='1" })).toEqual([]);
  });

  it('keeps at most max_entries (the newest) and nothing older than max_age_days', async () => {
    const audit = make({ max_entries: 10, max_age_days: 1 });
    for (let i = 0; i < 25; i++) audit.record(entry({ capability_id: `c${i}` }));
    await audit.flush();
    expect(audit.query({ limit: 100 }).map((e) => e.capability_id)).toEqual(Array.from({ length: 10 }, (_, i) => `c${24 - i}`));
    clock += 2 * 86_400_000;
    audit.record(entry({ capability_id: 'today' }));
    await audit.flush();
    expect(audit.query({ limit: 100 }).map((e) => e.capability_id)).toEqual(['today']);
  });

  it('a failed write is counted and logged, never thrown', async () => {
    const audit = make();
    audit.record(entry());
    db.close();
    await expect(audit.flush()).resolves.toBeUndefined();
    db = new Database(':memory:'); // for afterEach
    expect((audit as unknown as { dropped: number }).dropped).toBe(1);
  });
});

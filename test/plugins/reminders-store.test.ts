// Claim before deliver: a due firing can be taken once only, whoever asks and however often; a taken
// repeating reminder moves to its next time, a one-time one is done, a cancelled one cannot be taken.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ReminderStore } from '../../plugins/reminders/store.js';
import { nextOccurrence } from '../../plugins/reminders/index.js';

let dir: string;
let a: ReminderStore;
let b: ReminderStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hc-reminders-'));
  // Two connections to the same file: two plugin instances (a reload) or a Core restarted mid-firing.
  a = new ReminderStore(dir);
  b = new ReminderStore(dir);
});

afterEach(() => {
  a.close();
  b.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ReminderStore.claim', () => {
  it('a one-time firing is taken by exactly one of two instances, then done', () => {
    const r = a.add({ user_id: 'alice', channel: 'chat', text: 'call mom', schedule: { kind: 'once', at: 1000 }, timezone: 'UTC', next_at: 1000, now: 0 });
    expect(a.due(2000).map((x) => x.id)).toEqual([r.id]);
    const results = [a.claim(r.id, 1000, null), b.claim(r.id, 1000, null), a.claim(r.id, 1000, null)];
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(b.get(r.id)).toMatchObject({ status: 'done', next_at: null, fired_count: 1 });
    expect(a.due(5000)).toEqual([]);
  });

  it('a repeating reminder moves on; the old due time cannot be taken again', () => {
    const schedule = { kind: 'cron' as const, pattern: '0 0 8 * * 1', description: 'every Monday at 08:00' };
    const monday = Date.parse('2026-11-30T08:00:00Z');
    const r = a.add({ user_id: 'bob', channel: null, text: 'bins', schedule, timezone: 'UTC', next_at: monday, now: 0 });
    const next = nextOccurrence(schedule, 'UTC', monday, monday + 1000);
    expect(next).toBe(Date.parse('2026-12-07T08:00:00Z'));
    expect(a.claim(r.id, monday, next)).toBe(true);
    expect(b.claim(r.id, monday, next)).toBe(false);
    expect(b.get(r.id)).toMatchObject({ status: 'active', next_at: next, fired_count: 1 });
  });

  it('a cancelled reminder is never taken, and only its owner may cancel it', () => {
    const r = a.add({ user_id: 'alice', channel: null, text: 'x', schedule: { kind: 'once', at: 10 }, timezone: 'UTC', next_at: 10, now: 0 });
    expect(b.cancel(r.id, 'mallory')).toBe(false);
    expect(b.cancel(r.id, 'alice')).toBe(true);
    expect(a.claim(r.id, 10, null)).toBe(false);
    expect(a.listOpen('alice')).toEqual([]);
  });

  it('intervals step from the due time, skipping every missed step at once', () => {
    const every = { kind: 'interval' as const, every_ms: 1000, description: 'every second' };
    expect(nextOccurrence(every, 'UTC', 5000, 5000)).toBe(6000);
    expect(nextOccurrence(every, 'UTC', 5000, 9500)).toBe(10_000);
    expect(nextOccurrence({ kind: 'once', at: 1 }, 'UTC', 1, 2)).toBeNull();
  });
});

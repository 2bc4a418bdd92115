// The newest audit entry of each plugin (the dashboard's "last outcome"): read from the table on the
// first call, then kept current by every batch written, refused calls included.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { AuditLog } from '../../src/access/audit-log.js';
import { silentLogger } from '../../src/log.js';

function newLog(): AuditLog {
  return new AuditLog({ db: new Database(':memory:'), log: silentLogger(), max_entries: 1000, max_age_days: 90, flush_interval_ms: 60_000 });
}

describe('AuditLog.lastPerPlugin', () => {
  it('gives one entry per plugin, the newest, newest first, before and after later writes', async () => {
    const audit = newLog();
    expect(audit.lastPerPlugin()).toEqual([]);
    const now = Date.now();
    audit.record({ ts: now, plugin_id: 'time', capability_id: 'now', outcome: 'ok', duration_ms: 2, user_id: 'alice', channel: 'kitchen' });
    audit.record({ ts: now + 1, plugin_id: 'buy', capability_id: 'place_order', outcome: 'confirmation_required', duration_ms: 0 });
    audit.record({ ts: now + 2, plugin_id: 'time', capability_id: 'now', outcome: 'timeout', duration_ms: 30_000.4 });
    await audit.flush();
    expect(audit.lastPerPlugin().map((e) => [e.plugin_id, e.outcome, e.duration_ms])).toEqual([
      ['time', 'timeout', 30_000],
      ['buy', 'confirmation_required', 0],
    ]);

    audit.record({ ts: now + 3, plugin_id: 'buy', capability_id: 'place_order', outcome: 'ok', duration_ms: 12, user_id: 'bob', channel: 'dashboard' });
    audit.record({ ts: now + 4, plugin_id: 'notes', capability_id: 'save_note', outcome: 'forbidden', duration_ms: 0, user_id: 'kid' });
    await audit.flush();
    const last = audit.lastPerPlugin();
    expect(last.map((e) => [e.plugin_id, e.outcome])).toEqual([
      ['notes', 'forbidden'],
      ['buy', 'ok'],
      ['time', 'timeout'],
    ]);
    // The kept answer is what a fresh read of the table gives.
    expect(last).toEqual(['notes', 'buy', 'time'].map((plugin) => audit.query({ plugin, limit: 1 })[0]));
  });

  it('reads entries written before its first call', async () => {
    const audit = newLog();
    const now = Date.now();
    for (let i = 0; i < 50; i++)
      audit.record({ ts: now + i, plugin_id: `p${i % 5}`, capability_id: 'c', outcome: i === 49 ? 'plugin_error' : 'ok', duration_ms: i });
    await audit.flush();
    const last = audit.lastPerPlugin();
    expect(last.map((e) => e.plugin_id)).toEqual(['p4', 'p3', 'p2', 'p1', 'p0']);
    expect(last[0]).toMatchObject({ outcome: 'plugin_error', duration_ms: 49, ts: now + 49 });
  });
});

// What the access rules cost on the invocation path: the dispatcher with the per-user policy check and
// the audit log (batched SQLite writes on a file database in WAL mode, as in the Core) against the same
// dispatcher without them, on a built-in plugin that answers at once, so only the Core's own work shows.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { AuditLog } from '../../src/access/audit-log.js';
import { AccessPolicy } from '../../src/access/policy.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import type { InvocationEventBus } from '../../src/dispatch/invocation-events.js';
import { silentLogger } from '../../src/log.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { instantEcho } from './instant-echo.js';
import { markdownTable, measurePair, ratio } from './stats.js';

const CALLS = 20_000;

export async function runAccessBench(): Promise<string> {
  const log = silentLogger();
  const dir = mkdtempSync(join(tmpdir(), 'homeclaw-bench-access-'));
  const db = new Database(join(dir, 'homeclaw.db'));
  db.pragma('journal_mode = WAL');
  try {
    const { registry, adapter, call, config } = instantEcho(db, log);
    const audit = new AuditLog({ db, log, max_entries: 100_000, max_age_days: 90, flush_interval_ms: 1000 });
    // A realistic policy: a default allow list, a user with denials and confirmation patterns to check.
    const policy = new AccessPolicy({
      default: { allow: ['echo', 'time', 'weather'] },
      users: { kid: { deny: ['lock', 'buy'] }, alice: { deny: ['*.delete_*'] } },
      require_confirmation: ['garage.open', 'lock.unlock'],
    });
    const plain = new Dispatcher({ registry, adapters: [adapter], config, log });
    const events: InvocationEventBus = new TypedEventBus(log);
    events.on('invocation.finished', ({ audit: entry }) => audit.record(entry));
    const guarded = new Dispatcher({ registry, adapters: [adapter], config, log, guard: policy, events });
    const rows: (string | number)[][] = [];
    for (const concurrency of [1, 64]) {
      const pair = await measurePair(
        async () => void (await plain.invoke(call)),
        async () => void (await guarded.invoke(call)),
        CALLS,
        concurrency,
        10,
      );
      rows.push([
        concurrency,
        'dispatcher alone (baseline)',
        pair.baseline.p50 * 1000,
        pair.baseline.mean * 1000,
        Math.round(pair.baseline.throughput),
        '1.00x',
      ]);
      rows.push([
        concurrency,
        'dispatcher + policy + audit log',
        pair.candidate.p50 * 1000,
        pair.candidate.mean * 1000,
        Math.round(pair.candidate.throughput),
        ratio(pair.candidate.mean, pair.baseline.mean),
      ]);
    }
    await audit.stop();
    return [
      `Access rules on the invocation path (${CALLS} calls per row, alternating blocks; µs)`,
      markdownTable(['concurrency', 'path', 'p50 µs', 'mean µs', 'calls/s', 'mean vs baseline'], rows),
    ].join('\n');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

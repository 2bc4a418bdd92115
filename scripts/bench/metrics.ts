// What the invocation metrics cost on the dispatcher's path: the dispatcher as the Core builds it (policy
// guard, audit hook, finished hook) against the same dispatcher whose hooks also feed InvocationMetrics,
// on a plugin that answers at once, so only the Core's own work shows. A third row feeds prom-client's
// Counter and Histogram with labels on every call instead, the design the metrics avoid.
import Database from 'better-sqlite3';
import { Counter, Histogram, Registry as PromRegistry } from 'prom-client';
import { AccessPolicy } from '../../src/access/policy.js';
import type { PluginAdapter } from '../../src/adapters/adapter.js';
import type { InvocationAudit, InvokeOptions } from '../../src/dispatch/dispatcher-api.js';
import { Dispatcher, type DispatcherDeps, type InvocationRecord } from '../../src/dispatch/dispatcher.js';
import { silentLogger } from '../../src/log.js';
import { INVOCATION_BUCKETS, InvocationMetrics } from '../../src/observability/invocation-metrics.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';
import { markdownTable, measurePair, ratio } from './stats.js';

const CALLS = 40_000;

export async function runMetricsBench(): Promise<string> {
  const log = silentLogger();
  const db = new Database(':memory:');
  try {
    const registry = new Registry({ db, events: new TypedEventBus(log), log });
    registry.register({
      descriptor: {
        id: 'echo',
        name: 'Echo',
        description: 'Answers at once.',
        source: 'external',
        type: 'inline',
        config: { max_concurrency: 64 },
        capabilities: [{ id: 'run', name: 'Run', description: 'Run.', parameters: [], post_process: false }],
      },
      owner: 'api',
    });
    const adapter: PluginAdapter = {
      type: 'inline',
      invoke: async ({ request }) => ({ request_id: request.request_id, plugin_id: request.plugin_id, success: true, text: 'ok' }),
    };
    const policy = new AccessPolicy({ users: {}, require_confirmation: [] });
    // Stand-ins for the audit log and the event feed, so every row pays for the same hooks.
    let audited = 0;
    let finished = 0;
    const dispatcher = (extra: { ended?: (e: InvocationAudit) => void; finished?: (r: InvocationRecord) => void } = {}): Dispatcher => {
      const deps: DispatcherDeps = {
        registry,
        adapters: [adapter],
        config: { default_timeout_sec: 30, default_max_concurrency: 64, default_queue_limit: 1000 },
        log,
        guard: policy,
        audit: (entry) => {
          audited++;
          extra.ended?.(entry);
        },
        onFinished: (record) => {
          finished++;
          extra.finished?.(record);
        },
      };
      return new Dispatcher(deps);
    };
    const metrics = new InvocationMetrics({ registry, log, max_series: 1000 });
    metrics.registerIn(new PromRegistry());
    const counter = new Counter({ name: 'c_total', help: 'h', labelNames: ['plugin', 'capability', 'outcome'], registers: [] });
    const histogram = new Histogram({ name: 'h_seconds', help: 'h', labelNames: ['plugin', 'capability'], buckets: INVOCATION_BUCKETS, registers: [] });
    const plain = dispatcher();
    const metered = dispatcher({ ended: (e) => metrics.ended(e), finished: (r) => metrics.finished(r) });
    const labelled = dispatcher({
      ended: (e) => counter.inc({ plugin: e.plugin_id, capability: e.capability_id, outcome: e.outcome }),
      finished: (r) => histogram.observe({ plugin: r.plugin_id, capability: r.capability_id }, r.duration_ms / 1000),
    });
    const call: InvokeOptions = { plugin_id: 'echo', capability_id: 'run', parameters: {}, context: { user_id: 'alice', channel_name: 'home' } };
    const rows: (string | number)[][] = [];
    for (const concurrency of [1, 64]) {
      const ours = await measurePair(async () => void (await plain.invoke(call)), async () => void (await metered.invoke(call)), CALLS, concurrency, 10);
      const theirs = await measurePair(async () => void (await plain.invoke(call)), async () => void (await labelled.invoke(call)), CALLS, concurrency, 10);
      const row = (path: string, s: typeof ours.baseline, base: typeof ours.baseline): (string | number)[] => [
        concurrency,
        path,
        s.p50 * 1000,
        s.mean * 1000,
        Math.round(s.throughput),
        ratio(s.p50, base.p50),
        ratio(s.mean, base.mean),
      ];
      rows.push(row('dispatcher, no metrics (baseline)', ours.baseline, ours.baseline));
      rows.push(row('+ invocation metrics (InvocationMetrics)', ours.candidate, ours.baseline));
      rows.push(row('dispatcher, no metrics (baseline, second pair)', theirs.baseline, theirs.baseline));
      rows.push(row('+ prom-client Counter/Histogram with labels per call', theirs.candidate, theirs.baseline));
    }
    if (audited !== finished) throw new Error(`every call should be audited and finished once: ${audited} vs ${finished}`);
    metrics.stop();
    return [
      `Invocation metrics on the dispatcher path (${CALLS} calls per row, alternating blocks; µs)`,
      markdownTable(['concurrency', 'path', 'p50 µs', 'mean µs', 'calls/s', 'p50 vs baseline', 'mean vs baseline'], rows),
    ].join('\n');
  } finally {
    db.close();
  }
}

// What the metrics cost. First on the dispatcher's path: the dispatcher as the Core builds it (policy
// guard, audit hook, finished hook) against the same dispatcher whose hooks also feed InvocationMetrics,
// on a plugin that answers at once, so only the Core's own work shows; another row feeds prom-client's
// Counter and Histogram with labels on every call instead, the design the metrics avoid. Then the whole
// MQTT round trip: two Cores in this process, metrics off and on, each invoking its own SDK echo plugin
// in another process, measured in alternating blocks.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Counter, Histogram, Registry as PromRegistry } from 'prom-client';
import { AccessPolicy } from '../../src/access/policy.js';
import type { InvocationAudit } from '../../src/dispatch/dispatcher-api.js';
import { Dispatcher, type DispatcherDeps, type InvocationRecord } from '../../src/dispatch/dispatcher.js';
import type { InvocationEventBus } from '../../src/dispatch/invocation-events.js';
import { silentLogger } from '../../src/log.js';
import { INVOCATION_BUCKETS, InvocationMetrics } from '../../src/observability/invocation-metrics.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { startCore } from '../../src/main.js';
import { coreConfig, corePath } from './core-bus.js';
import { instantEcho } from './instant-echo.js';
import { markdownTable, measure, measurePair, ratio } from './stats.js';

const CALLS = 40_000;
const MQTT_CALLS = 6_000;

export async function runMetricsBench(): Promise<string> {
  return [await dispatcherPath(), await mqttRoundTrip()].join('\n\n');
}

async function mqttRoundTrip(): Promise<string> {
  const dirs = [mkdtempSync(join(tmpdir(), 'bench-metrics-off-')), mkdtempSync(join(tmpdir(), 'bench-metrics-on-'))];
  const off = await startCore({ config: coreConfig(dirs[0]!, undefined, { metrics: { enabled: false } }), log: silentLogger() });
  const on = await startCore({ config: coreConfig(dirs[1]!), log: silentLogger() });
  try {
    const offPath = await corePath(off, `mqtt://127.0.0.1:${off.mqttPort}`);
    const onPath = await corePath(on, `mqtt://127.0.0.1:${on.mqttPort}`);
    await measure(offPath.op, 300, 8);
    await measure(onPath.op, 300, 8);
    const rows: (string | number)[][] = [];
    for (const concurrency of [1, 64]) {
      const { baseline: b, candidate: c } = await measurePair(offPath.op, onPath.op, MQTT_CALLS, concurrency, 10);
      rows.push([concurrency, 'Core, metrics.enabled: false (baseline)', b.p50, b.p99, Math.round(b.throughput), '1.00x', '1.00x']);
      rows.push([concurrency, 'Core, metrics on', c.p50, c.p99, Math.round(c.throughput), ratio(c.p50, b.p50), ratio(c.throughput, b.throughput)]);
    }
    await offPath.close();
    await onPath.close();
    return [
      `Core dispatcher -> SDK plugin over the embedded broker, metrics off and on (QoS 1, ${MQTT_CALLS} calls per row, alternating blocks; ms)`,
      markdownTable(['concurrency', 'path', 'p50 ms', 'p99 ms', 'calls/s', 'p50 vs baseline', 'throughput vs baseline'], rows),
    ].join('\n');
  } finally {
    await off.stop();
    await on.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

async function dispatcherPath(): Promise<string> {
  const log = silentLogger();
  const db = new Database(':memory:');
  try {
    const { registry, adapter, call, config } = instantEcho(db, log);
    const policy = new AccessPolicy({ users: {}, require_confirmation: [] });
    // Stand-ins for the audit log and the event feed, so every row pays for the same hooks.
    let audited = 0;
    let finished = 0;
    const dispatcher = (extra: { ended?: (e: InvocationAudit) => void; finished?: (r: InvocationRecord) => void } = {}): Dispatcher => {
      const events: InvocationEventBus = new TypedEventBus(log);
      events.on('invocation.finished', ({ record, audit, refused }) => {
        audited++;
        extra.ended?.(audit);
        if (refused) return;
        finished++;
        extra.finished?.(record);
      });
      const deps: DispatcherDeps = {
        registry,
        adapters: [adapter],
        config,
        log,
        guard: policy,
        events,
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
    const rows: (string | number)[][] = [];
    for (const concurrency of [1, 64]) {
      const ours = await measurePair(
        async () => void (await plain.invoke(call)),
        async () => void (await metered.invoke(call)),
        CALLS,
        concurrency,
        10,
      );
      const theirs = await measurePair(
        async () => void (await plain.invoke(call)),
        async () => void (await labelled.invoke(call)),
        CALLS,
        concurrency,
        10,
      );
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

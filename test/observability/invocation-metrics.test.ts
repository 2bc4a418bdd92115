// Invocation metrics against a real registry and a real prom-client Registry, read back through the
// official Prometheus parser: labels come only from registered ids, the series cap holds, removed plugins
// and capabilities take their series with them, and the hand-fed histogram says exactly what
// prom-client's own Histogram says for the same observations.
import { Histogram, Registry as PromRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { INVOCATION_BUCKETS, InvocationMetrics } from '../../src/observability/invocation-metrics.js';
import { SeriesHistogram } from '../../src/observability/series-histogram.js';
import type { PluginDescriptor } from '../../src/protocol/types.js';
import { parseExposition, type Exposition } from '../helpers/prometheus.js';
import { newRegistry } from '../retrieval/fixtures.js';

function descriptor(id: string, capabilities: string[]): PluginDescriptor {
  return {
    id,
    name: id,
    description: `The ${id} plugin`,
    source: 'external',
    type: 'http',
    config: {},
    capabilities: capabilities.map((c) => ({ id: c, name: c, description: `Does ${c}`, parameters: [], post_process: false })),
  };
}

function setup(maxSeries = 1000) {
  const registry = newRegistry();
  const lines: string[] = [];
  const log = createLogger({ level: 'info', destination: { write: (line: string) => void lines.push(line) } });
  const metrics = new InvocationMetrics({ registry, log, max_series: maxSeries });
  const prom = new PromRegistry();
  metrics.registerIn(prom);
  const scrape = async (): Promise<Exposition> => parseExposition(await prom.metrics());
  const register = (id: string, capabilities: string[]): void => {
    const outcome = registry.register({ descriptor: descriptor(id, capabilities), owner: 'api' });
    expect(outcome.ok).toBe(true);
  };
  const call = (plugin_id: string, capability_id: string, outcome = 'ok', duration_ms?: number): void => {
    metrics.ended({ plugin_id, capability_id, outcome });
    if (duration_ms !== undefined) metrics.finished({ plugin_id, capability_id, duration_ms });
  };
  return { registry, metrics, scrape, register, call, lines };
}

const total = (m: Exposition, plugin: string, capability: string, outcome: string): number | undefined =>
  m.value('homeclaw_invocations_total', { plugin, capability, outcome });

describe('invocation metrics', () => {
  it('labels only registered ids: unknown plugins and capabilities share "_unknown" and never grow the series', async () => {
    const { metrics, scrape, register, call } = setup();
    register('lamp', ['on', 'off']);
    call('lamp', 'on', 'ok', 3);
    for (let i = 0; i < 500; i++) call(`ghost-${i}`, 'haunt', 'not_found');
    for (let i = 0; i < 200; i++) call('lamp', `dance-${i}`, 'not_found');
    expect(metrics.seriesCount()).toBe(2); // lamp/on and lamp/_unknown
    const m = await scrape();
    expect(total(m, 'lamp', 'on', 'ok')).toBe(1);
    expect(total(m, '_unknown', '_unknown', 'not_found')).toBe(500);
    expect(total(m, 'lamp', '_unknown', 'not_found')).toBe(200);
    expect(m.labelValues().some((v) => v.startsWith('ghost-') || v.startsWith('dance-'))).toBe(false);
  });

  it('keeps at most max_series pairs; further pairs share "_other", said once in the log; a removed plugin frees its slots', async () => {
    const { metrics, scrape, register, call, registry, lines } = setup(2);
    register('lamp', ['on', 'off']);
    register('fan', ['spin']);
    call('lamp', 'on');
    call('lamp', 'off');
    call('fan', 'spin', 'ok', 12);
    call('fan', 'spin', 'timeout', 5000);
    let m = await scrape();
    expect(metrics.seriesCount()).toBe(2);
    expect(total(m, '_other', '_other', 'ok')).toBe(1);
    expect(total(m, '_other', '_other', 'timeout')).toBe(1);
    expect(m.value('homeclaw_invocation_duration_seconds_count', { plugin: '_other', capability: '_other' })).toBe(2);
    expect(m.labelValues()).not.toContain('fan');
    expect(lines.filter((line) => line.includes('metrics.max_series'))).toHaveLength(1);

    expect(registry.unregister('lamp').ok).toBe(true);
    expect(metrics.seriesCount()).toBe(0);
    call('fan', 'spin');
    m = await scrape();
    expect(total(m, 'fan', 'spin', 'ok')).toBe(1);
    // The removed plugin's series are gone from the exposition.
    expect(m.samples('homeclaw_invocations_total', { plugin: 'lamp' })).toEqual([]);
  });

  it('drops the series of a capability a new descriptor no longer has', async () => {
    const { scrape, register, call } = setup();
    register('lamp', ['on', 'off', 'blink']);
    call('lamp', 'on', 'ok', 1);
    call('lamp', 'blink', 'ok', 1);
    register('lamp', ['on', 'off']);
    const m = await scrape();
    expect(total(m, 'lamp', 'on', 'ok')).toBe(1);
    expect(m.samples('homeclaw_invocations_total', { capability: 'blink' })).toEqual([]);
    expect(m.samples('homeclaw_invocation_duration_seconds_count', { capability: 'blink' })).toEqual([]);
  });

  it('reads an outcome outside the error codes as plugin_error, and counts across scrapes', async () => {
    const { scrape, register, call } = setup();
    register('lamp', ['on']);
    call('lamp', 'on', 'exploded');
    call('lamp', 'on', 'busy');
    let m = await scrape();
    expect(total(m, 'lamp', 'on', 'plugin_error')).toBe(1);
    expect(total(m, 'lamp', 'on', 'busy')).toBe(1);
    expect(m.labelValues()).not.toContain('exploded');
    call('lamp', 'on', 'busy');
    call('lamp', 'on', 'busy');
    m = await scrape();
    expect(total(m, 'lamp', 'on', 'busy')).toBe(3);
    expect(total(m, 'lamp', 'on', 'plugin_error')).toBe(1);
  });

  it('serves the same histogram as prom-client for the same observations', async () => {
    const ours = new SeriesHistogram('t_seconds', 'test', ['plugin', 'capability'], INVOCATION_BUCKETS);
    const reference = new Histogram({ name: 't_seconds', help: 'test', labelNames: ['plugin', 'capability'], buckets: INVOCATION_BUCKETS, registers: [] });
    const values = [0, 0.0004, 0.001, 0.0011, 0.003, 0.05, 0.7, 1, 9.99, 59, 60, 61, 3600];
    const series = ours.open({ plugin: 'lamp', capability: 'on' });
    const other = ours.open({ plugin: 'fan', capability: 'spin' });
    for (const v of values) {
      series.observe(v);
      reference.observe({ plugin: 'lamp', capability: 'on' }, v);
    }
    other.observe(0.2);
    reference.observe({ plugin: 'fan', capability: 'spin' }, 0.2);
    const a = new PromRegistry();
    const b = new PromRegistry();
    ours.registerIn(a);
    b.registerMetric(reference);
    expect(await a.metrics()).toBe(await b.metrics());
    const parsed = await parseExposition(await a.metrics());
    expect(parsed.value('t_seconds_bucket', { plugin: 'lamp', capability: 'on', le: '0.001' })).toBe(3);
    expect(parsed.value('t_seconds_bucket', { plugin: 'lamp', capability: 'on', le: '60' })).toBe(11);
    expect(parsed.value('t_seconds_bucket', { plugin: 'lamp', capability: 'on', le: '+Inf' })).toBe(13);
    ours.close(other);
    expect(await a.metrics()).not.toContain('fan');
  });
});

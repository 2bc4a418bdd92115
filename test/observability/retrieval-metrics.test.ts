// Retrieval metrics around real Retrieval instances: BM25 by configuration, BM25 because Chroma is
// unreachable (degraded), and a hybrid answer; refused queries are not counted.
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { RetrievalMetrics } from '../../src/observability/retrieval-metrics.js';
import type { Embedder } from '../../src/retrieval/embedder.js';
import { createRetrieval, type Retrieval } from '../../src/retrieval/retrieval.js';
import type { PluginSearchApi, RetrievalStatus } from '../../src/retrieval/search-api.js';
import { parseExposition } from '../helpers/prometheus.js';
import { HOME_PLUGINS, newRegistry, retrievalConfig } from '../retrieval/fixtures.js';

const running: Retrieval[] = [];
afterEach(async () => {
  for (const r of running.splice(0)) await r.stop();
});

/** Never asked: Chroma is unreachable before anything is embedded. */
const unusedEmbedder: Embedder = {
  name: 'unused',
  dimension: () => 4,
  embed: () => Promise.reject(new Error('not expected')),
};

async function retrieval(enabled: boolean): Promise<Retrieval> {
  const registry = newRegistry();
  for (const descriptor of HOME_PLUGINS) registry.register({ descriptor, owner: 'api' });
  const r = await createRetrieval({
    config: { ...retrievalConfig({ collection: 'metrics', url: 'http://127.0.0.1:9', data_dir: '' }), enabled },
    registry,
    log: silentLogger(),
    embedder: unusedEmbedder,
  });
  running.push(r);
  await r.start();
  return r;
}

describe('retrieval metrics', () => {
  it('counts BM25 by configuration as bm25 and BM25 because dense search is down as degraded', async () => {
    const prom = new Registry();
    const bm25Only = await retrieval(false);
    const degraded = await retrieval(true);
    expect(degraded.status().state).toBe('degraded');
    // One metrics object per Core; two searches APIs here only to see both modes side by side.
    const metrics = new RetrievalMetrics(prom, () => degraded.status());
    const byConfig = metrics.meter(bm25Only, false);
    const whileDown = metrics.meter(degraded, true);
    expect((await byConfig.search('turn on the lights')).mode).toBe('bm25');
    expect((await whileDown.search('turn on the lights')).hits.length).toBeGreaterThan(0);
    await whileDown.search('water the garden');
    expect((await byConfig.search('   ')).error).toMatch(/empty/);
    const m = await parseExposition(await prom.metrics());
    expect(m.value('homeclaw_retrieval_queries_total', { mode: 'bm25' })).toBe(1);
    expect(m.value('homeclaw_retrieval_queries_total', { mode: 'degraded' })).toBe(2);
    expect(m.value('homeclaw_retrieval_query_duration_seconds_count', { mode: 'degraded' })).toBe(2);
    expect(m.value('homeclaw_retrieval_degraded')).toBe(1);
  });

  it('counts a hybrid answer as hybrid', async () => {
    const prom = new Registry();
    const status: RetrievalStatus = { state: 'ok', embedder: 'test', indexed: 1 };
    const hybrid: PluginSearchApi = {
      search: async (query) => ({ query, k: 5, hits: [], mode: 'hybrid' }),
      status: () => status,
    };
    const metrics = new RetrievalMetrics(prom, () => hybrid.status());
    await metrics.meter(hybrid, true).search('anything');
    const m = await parseExposition(await prom.metrics());
    expect(m.value('homeclaw_retrieval_queries_total', { mode: 'hybrid' })).toBe(1);
    expect(m.value('homeclaw_retrieval_degraded')).toBe(0);
  });
});

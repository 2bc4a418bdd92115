// Retrieval metrics: every search the Core answers (conversation, GET /api/plugins/search, MCP
// find_plugins), by how it was ranked, and how long it took. The search API is wrapped, so retrieval
// itself knows nothing of metrics.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { PluginSearchApi, RetrievalStatus } from '../retrieval/search-api.js';

/**
 * hybrid: BM25 fused with embeddings; bm25: dense search turned off by configuration; degraded: dense
 * search configured but unavailable (Chroma or the embedder down or starting), so BM25 alone answered.
 */
export type SearchModeLabel = 'hybrid' | 'bm25' | 'degraded' | 'dense';

/** Seconds: BM25 answers in tens of microseconds, a hybrid query embeds on the CPU in tens of milliseconds. */
export const RETRIEVAL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

export class RetrievalMetrics {
  private readonly queries: Counter<'mode'>;
  private readonly duration: Histogram<'mode'>;

  constructor(registry: Registry, status: () => RetrievalStatus) {
    const registers = [registry];
    this.queries = new Counter({
      name: 'homeclaw_retrieval_queries_total',
      help: 'Retrieval queries answered, by mode: hybrid, bm25 (dense search off by config) or degraded (dense search down).',
      labelNames: ['mode'],
      registers,
    });
    this.duration = new Histogram({
      name: 'homeclaw_retrieval_query_duration_seconds',
      help: 'Duration of answered retrieval queries, by mode (a hybrid query includes embedding it).',
      labelNames: ['mode'],
      buckets: RETRIEVAL_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'homeclaw_retrieval_degraded',
      help: '1 while dense search is configured but unavailable and retrieval answers from BM25 alone, else 0.',
      registers,
      collect() {
        this.set(status().state === 'degraded' ? 1 : 0);
      },
    });
  }

  /**
   * The same search API, counted. `denseConfigured` tells a BM25 answer by choice from one because dense
   * search is down. Refused queries (empty, bad k) are not counted: nothing was searched.
   */
  meter(api: PluginSearchApi, denseConfigured: boolean): PluginSearchApi {
    const metrics = this;
    return {
      async search(query, options) {
        const startedAt = performance.now();
        const response = await api.search(query, options);
        if (response.error === undefined) {
          const mode: SearchModeLabel = response.mode === 'bm25' && denseConfigured ? 'degraded' : response.mode;
          metrics.queries.inc({ mode });
          metrics.duration.observe({ mode }, (performance.now() - startedAt) / 1000);
        }
        return response;
      },
      status: () => api.status(),
    };
  }
}

// Plugin retrieval: BM25 in process (always available) fused with dense similarity from Chroma.
// Keeping Chroma in step with the registry, and degrading to BM25 when Chroma or the embedder fails,
// is DenseSync's job (dense-sync.ts); this file answers queries. Query embeddings are cached by text
// (LRU) and go ahead of indexing work in the embedder.
import type { RetrievalConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { PluginRecord } from '../registry/record.js';
import { isRoutable } from '../registry/record.js';
import type { RegistryApi } from '../registry/registry-api.js';
import { Bm25Index } from './bm25.js';
import type { DenseMatch } from './chroma-index.js';
import { DenseSync } from './dense-sync.js';
import type { Embedder } from './embedder.js';
import { EmbeddingPool } from './embedding-pool.js';
import { fuse } from './fusion.js';
import { OpenAiEmbedder } from './openai-embedder.js';
import { capabilityText, pluginBm25Text } from './plugin-documents.js';
import { QueryEmbeddingCache } from './query-cache.js';
import type { CapabilityMatch, PluginHit, PluginSearchApi, RetrievalStatus, SearchOptions, SearchResponse } from './search-api.js';
import { checkSearchRequest } from './search-request.js';
import { USE_LITE_DIMENSION, USE_LITE_NAME } from './use-lite-embedder.js';

/** Optional knobs beyond RetrievalConfig (all have defaults). */
export interface RetrievalTuning {
  /** How often a degraded index retries Chroma / the embedder, and a healthy one checks Chroma. */
  retry_interval_sec?: number;
  /** Dimension of an OpenAI-compatible embedder, when known (saves one probe call). */
  embedder_dimension?: number;
  /** How many Chroma documents a query fetches at least (more plugins → better z-score statistics). */
  dense_candidates?: number;
}

export interface CreateRetrievalOptions {
  config: RetrievalConfig & RetrievalTuning & { data_dir: string };
  registry: RegistryApi;
  log: Logger;
  /** Overrides the embedder chosen by config (tests, benchmarks). */
  embedder?: Embedder;
}

/** Query embeddings remembered by default (512 numbers each: about 4 MB per 1,000). */
const DEFAULT_QUERY_CACHE_SIZE = 1000;

export class Retrieval implements PluginSearchApi {
  private readonly config: CreateRetrievalOptions['config'];
  private readonly registry: RegistryApi;
  private readonly log: Logger;
  private readonly embedder: Embedder;
  /** Only an embedder this instance created is closed by stop(); an injected one belongs to the caller. */
  private readonly ownsEmbedder: boolean;
  private readonly dense: DenseSync;
  private readonly queryCache: QueryEmbeddingCache;
  private readonly pluginBm25 = new Bm25Index();
  private readonly capabilityBm25 = new Bm25Index();
  private readonly capabilityKeys = new Map<string, string[]>();
  private readonly forceRules: { pattern: RegExp; plugin_id: string }[] = [];
  private unsubscribe: (() => void)[] = [];
  private stopped = false;

  constructor(options: CreateRetrievalOptions) {
    this.config = options.config;
    this.registry = options.registry;
    this.log = options.log;
    this.ownsEmbedder = options.embedder === undefined;
    this.embedder = options.embedder ?? chooseEmbedder(options.config, options.log);
    this.dense = new DenseSync({ config: options.config, registry: options.registry, log: options.log, embedder: this.embedder });
    this.queryCache = new QueryEmbeddingCache(options.config.query_cache_size ?? DEFAULT_QUERY_CACHE_SIZE);
    for (const rule of this.config.force_include) {
      try {
        this.forceRules.push({ pattern: new RegExp(rule.pattern, 'iu'), plugin_id: rule.plugin_id });
      } catch (err) {
        this.log.warn({ pattern: rule.pattern, plugin_id: rule.plugin_id, err: String(err) }, 'ignoring invalid force_include pattern');
      }
    }
  }

  /** Texts embedded since start (documents and queries alike); cached queries cost none. */
  embeddingCalls(): number {
    return this.dense.embeddingCalls();
  }

  async start(): Promise<void> {
    const bus = this.registry.events;
    // Subscribe before the first read of the registry so nothing registered in between is missed.
    this.unsubscribe.push(
      bus.on('plugin.registered', ({ record }) => this.onChange(record.descriptor.id)),
      bus.on('plugin.updated', ({ record }) => this.onChange(record.descriptor.id)),
      bus.on('plugin.removed', ({ record }) => this.onChange(record.descriptor.id)),
      // Health only changes the query-time filter; the hash comparison catches any change that arrived
      // without its own event.
      bus.on('plugin.health', ({ record }) => this.onChange(record.descriptor.id)),
    );
    for (const record of this.registry.list()) this.updateLexical(record.descriptor.id);
    if (!this.config.enabled) {
      this.log.info('retrieval: dense search disabled by config, BM25 only');
      return;
    }
    await this.dense.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    await this.dense.stop();
    if (this.ownsEmbedder) await this.embedder.close?.();
  }

  /** Full reconciliation with the registry; resolves when done (or degraded). */
  resync(): Promise<void> {
    for (const record of this.registry.list()) this.updateLexical(record.descriptor.id);
    return this.dense.resync();
  }

  /** Resolves once every queued sync job has run. */
  idle(): Promise<void> {
    return this.dense.idle();
  }

  status(): RetrievalStatus {
    const ready = this.dense.isReady();
    const status: RetrievalStatus = {
      state: !this.config.enabled ? 'disabled' : ready ? 'ok' : 'degraded',
      embedder: this.embedder.name,
      indexed: this.pluginBm25.size,
    };
    const dimension = this.embedder.dimension();
    if (dimension !== undefined) status.dimension = dimension;
    if (status.state === 'degraded') status.reason = this.dense.reason() ?? 'dense index starting';
    const url = this.dense.url();
    if (url) status.chroma_url = url;
    if (this.config.enabled) {
      status.backlog = this.dense.backlog();
      const health = this.embedder.health?.();
      if (health) status.embedding = health;
      status.query_cache = this.queryCache.stats();
    }
    return status;
  }

  async search(query: string, options: SearchOptions = {}): Promise<SearchResponse> {
    const checked = checkSearchRequest(query, options.k, this.config.top_k);
    if (!checked.ok) {
      return {
        query: typeof query === 'string' ? query.slice(0, 200) : '',
        k: 0,
        hits: [],
        mode: this.dense.isReady() ? 'hybrid' : 'bm25',
        error: checked.error,
      };
    }
    const warnings: string[] = [];
    if (checked.truncated) warnings.push(`query truncated to its first ${checked.query.length} characters`);
    if (checked.clamped) warnings.push(`k clamped to ${checked.k}`);
    const { query: text, k } = checked;
    const includeUnroutable = options.include_unroutable ?? false;
    const eligible = (id: string): PluginRecord | undefined => {
      const record = this.registry.get(id);
      return record && (includeUnroutable || isRoutable(record)) && (options.filter?.(record) ?? true) ? record : undefined;
    };

    const bm25 = new Map<string, number>();
    for (const [id, score] of this.pluginBm25.score(text)) if (eligible(id)) bm25.set(id, score);
    const denseMatches = await this.denseSearch(text, k);
    let dense: Map<string, number> | undefined;
    const denseCapability = new Map<string, number>();
    if (denseMatches) {
      dense = pluginDenseScores(denseMatches.filter((match) => eligible(match.plugin_id) !== undefined));
      for (const match of denseMatches) {
        if (match.kind === 'capability' && match.capability_id !== undefined && eligible(match.plugin_id)) {
          const key = `${match.plugin_id}::${match.capability_id}`;
          denseCapability.set(key, Math.max(denseCapability.get(key) ?? -1, match.similarity));
        }
      }
    }
    const fused = fuse({ bm25, dense, weights: this.config.weights });
    const byId = new Map(fused.map((f) => [f.id, f]));
    const capabilityLexical = this.capabilityBm25.score(text);

    const hits: PluginHit[] = [];
    const taken = new Set<string>();
    const add = (id: string, reason: PluginHit['reason']): void => {
      if (taken.has(id)) return;
      const record = eligible(id);
      if (!record) return;
      taken.add(id);
      const f = byId.get(id);
      const hit: PluginHit = {
        plugin_id: id,
        score: f?.score ?? 0,
        reason,
        capabilities: rankCapabilities(record, f?.score ?? 0, capabilityLexical, denseCapability),
        record,
      };
      if (f) hit.bm25_score = f.bm25;
      if (f?.dense !== undefined) hit.dense_score = f.dense;
      hits.push(hit);
    };
    for (const rule of this.forceRules) if (rule.pattern.test(text)) add(rule.plugin_id, 'forced');
    // Forced and pinned plugins come on top of the k ranked ones: they are offered whatever the ranking.
    let ranked = 0;
    for (const f of fused) {
      if (ranked >= k) break;
      if (!taken.has(f.id) && eligible(f.id)) ranked++;
      add(f.id, 'ranked');
    }
    for (const id of this.config.pinned) add(id, 'pinned');

    const response: SearchResponse = { query: text, k, hits, mode: dense ? 'hybrid' : 'bm25' };
    if (warnings.length) response.warnings = warnings;
    return response;
  }

  // ---- dense search -------------------------------------------------------------------------------

  private async denseSearch(text: string, k: number): Promise<DenseMatch[] | undefined> {
    const index = this.dense.denseIndex();
    if (!index) return undefined;
    try {
      const vector = await this.queryCache.get(text, async (query) => (await this.dense.embed([query], 'query'))[0]!);
      const n = Math.max(this.config.dense_candidates ?? 400, k * 20);
      return await index.query(vector, n);
    } catch (err) {
      this.dense.degrade(err);
      return undefined;
    }
  }

  // ---- lexical index ------------------------------------------------------------------------------

  private onChange(pluginId: string): void {
    this.updateLexical(pluginId);
    if (this.config.enabled && !this.stopped) this.dense.changed(pluginId);
  }

  private updateLexical(pluginId: string): void {
    const record = this.registry.get(pluginId);
    for (const key of this.capabilityKeys.get(pluginId) ?? []) this.capabilityBm25.delete(key);
    this.capabilityKeys.delete(pluginId);
    if (!record) {
      this.pluginBm25.delete(pluginId);
      return;
    }
    const descriptor = record.descriptor;
    this.pluginBm25.set(pluginId, pluginBm25Text(descriptor));
    const keys: string[] = [];
    for (const capability of descriptor.capabilities) {
      const key = `${pluginId}::${capability.id}`;
      this.capabilityBm25.set(key, capabilityText(descriptor, capability));
      keys.push(key);
    }
    this.capabilityKeys.set(pluginId, keys);
  }
}

function chooseEmbedder(config: CreateRetrievalOptions['config'], log: Logger): Embedder {
  if (config.embedder.kind === 'openai') {
    if (!config.embedder.model) throw new Error('retrieval.embedder.model is required when embedder.kind is openai');
    const options: ConstructorParameters<typeof OpenAiEmbedder>[0] = {
      base_url: config.embedder.base_url,
      model: config.embedder.model,
      api_key: config.embedder.api_key,
    };
    if (config.embedder_dimension !== undefined) options.dimension = config.embedder_dimension;
    return new OpenAiEmbedder(options);
  }
  // The offline model runs on worker threads; the event loop only passes texts and vectors.
  return new EmbeddingPool({
    name: USE_LITE_NAME,
    dimension: USE_LITE_DIMENSION,
    log: log.child({ component: 'embedding-pool' }),
    ...(config.embedder.workers ? { size: config.embedder.workers } : {}),
    ...(config.embedder.index_batch ? { index_batch: config.embedder.index_batch } : {}),
    ...(config.embedder.worker_nice !== undefined ? { nice: config.embedder.worker_nice } : {}),
    ...(config.embedder.index_duty_cycle ? { index_duty_cycle: config.embedder.index_duty_cycle } : {}),
    // Test-only: lets tests kill or break a real worker with marker texts (embedding-worker-protocol.ts).
    faults: process.env.HOMECLAW_TEST_EMBEDDER_FAULTS === '1',
  });
}

/**
 * A plugin's dense score from its matched documents (see plugin-documents.ts): the identity score
 * 0.7·max + 0.3·mean of its name and plugin documents, or the best capability/example document if that
 * is higher. An identity document Chroma did not return counts at the lowest similarity returned, a
 * conservative floor that keeps the score comparable across plugins.
 */
export function pluginDenseScores(matches: DenseMatch[]): Map<string, number> {
  const floor = matches.reduce((low, m) => Math.min(low, m.similarity), Infinity);
  const identity = new Map<string, { name?: number; plugin?: number }>();
  const other = new Map<string, number>();
  for (const match of matches) {
    if (match.kind === 'name' || match.kind === 'plugin') {
      const entry = identity.get(match.plugin_id) ?? {};
      entry[match.kind] = Math.max(entry[match.kind] ?? -Infinity, match.similarity);
      identity.set(match.plugin_id, entry);
    } else {
      other.set(match.plugin_id, Math.max(other.get(match.plugin_id) ?? -Infinity, match.similarity));
    }
  }
  const scores = new Map<string, number>();
  for (const [id, entry] of identity) {
    const a = entry.name ?? floor;
    const b = entry.plugin ?? floor;
    scores.set(id, 0.7 * Math.max(a, b) + 0.3 * ((a + b) / 2));
  }
  for (const [id, best] of other) scores.set(id, Math.max(scores.get(id) ?? -Infinity, best));
  return scores;
}

/** Capabilities of a hit, best match first: lexical and dense evidence per capability. */
function rankCapabilities(record: PluginRecord, pluginScore: number, lexical: Map<string, number>, dense: Map<string, number>): CapabilityMatch[] {
  const capabilities = record.descriptor.capabilities;
  if (capabilities.length === 1) return [{ capability_id: capabilities[0]!.id, score: pluginScore }];
  const pid = record.descriptor.id;
  const lexicalValues = capabilities.map((c) => lexical.get(`${pid}::${c.id}`) ?? 0);
  const maxLexical = Math.max(...lexicalValues, 0);
  return capabilities
    .map((c, i) => ({
      capability_id: c.id,
      score: (maxLexical > 0 ? lexicalValues[i]! / maxLexical : 0) + (dense.get(`${pid}::${c.id}`) ?? 0),
      order: i,
    }))
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .map(({ capability_id, score }) => ({ capability_id, score }));
}

export async function createRetrieval(options: CreateRetrievalOptions): Promise<Retrieval> {
  return new Retrieval(options);
}

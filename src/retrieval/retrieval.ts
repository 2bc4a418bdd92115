// Plugin retrieval: BM25 in process (always available) fused with dense similarity from Chroma.
//
// Sync: the registry is the truth. On start and on every registry event the index reconciles the
// affected plugin: an unchanged content hash costs nothing, a changed one is re-embedded, a removed
// plugin is deleted from Chroma at once. Stale/offline plugins stay indexed and are filtered at query
// time. All index work runs on one serial queue; each job reads the registry when it runs, so an event
// that arrives during a resync is applied after it and never lost.
//
// Degrade, never fail: when Chroma or the embedder fails, search answers from BM25 alone, status()
// says why, and a timer retries; when the part is back the index is fully resynced.
import type { RetrievalConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { PluginRecord } from '../registry/record.js';
import { isRoutable } from '../registry/record.js';
import type { RegistryApi } from '../registry/registry-api.js';
import { Bm25Index } from './bm25.js';
import { ChromaIndex, type DenseMatch, type PluginVectors } from './chroma-index.js';
import { ChromaProcess, chromaHeartbeat } from './chroma-process.js';
import type { Embedder } from './embedder.js';
import { fuse } from './fusion.js';
import { OpenAiEmbedder } from './openai-embedder.js';
import { capabilityText, pluginBm25Text, pluginDocuments } from './plugin-documents.js';
import type { CapabilityMatch, PluginHit, PluginSearchApi, RetrievalStatus, SearchOptions, SearchResponse } from './search-api.js';
import { checkSearchRequest } from './search-request.js';
import { UseLiteEmbedder } from './use-lite-embedder.js';
import { join } from 'node:path';

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

class EmbedderError extends Error {}

/** Plugins re-embedded per Chroma write during a resync: bounds memory and request size. */
const SYNC_BATCH = 64;

export class Retrieval implements PluginSearchApi {
  private readonly config: CreateRetrievalOptions['config'];
  private readonly registry: RegistryApi;
  private readonly log: Logger;
  private readonly embedder: Embedder;
  private readonly pluginBm25 = new Bm25Index();
  private readonly capabilityBm25 = new Bm25Index();
  private readonly capabilityKeys = new Map<string, string[]>();
  private readonly forceRules: { pattern: RegExp; plugin_id: string }[] = [];
  private chromaProcess: ChromaProcess | undefined;
  private index: ChromaIndex | undefined;
  private indexedHashes = new Map<string, string>();
  private denseReady = false;
  private degradedReason: string | undefined;
  private embedded = 0;
  private queue: Promise<void> = Promise.resolve();
  private unsubscribe: (() => void)[] = [];
  private timer: NodeJS.Timeout | undefined;
  private recovering = false;
  private stopped = false;

  constructor(options: CreateRetrievalOptions) {
    this.config = options.config;
    this.registry = options.registry;
    this.log = options.log;
    this.embedder = options.embedder ?? chooseEmbedder(options.config);
    for (const rule of this.config.force_include) {
      try {
        this.forceRules.push({ pattern: new RegExp(rule.pattern, 'iu'), plugin_id: rule.plugin_id });
      } catch (err) {
        this.log.warn({ pattern: rule.pattern, plugin_id: rule.plugin_id, err: String(err) }, 'ignoring invalid force_include pattern');
      }
    }
  }

  /** Embeddings computed since start (texts, documents and queries alike). */
  embeddingCalls(): number {
    return this.embedded;
  }

  async start(): Promise<void> {
    const bus = this.registry.events;
    // Subscribe before the first read of the registry so nothing registered in between is missed.
    this.unsubscribe.push(
      bus.on('plugin.registered', ({ record }) => this.onChange(record.descriptor.id)),
      bus.on('plugin.updated', ({ record }) => this.onChange(record.descriptor.id)),
      bus.on('plugin.removed', ({ record }) => this.onChange(record.descriptor.id)),
      // Health only changes the query-time filter; reconciling costs a hash comparison and catches
      // any change that arrived without its own event.
      bus.on('plugin.health', ({ record }) => this.onChange(record.descriptor.id)),
    );
    for (const record of this.registry.list()) this.updateLexical(record.descriptor.id);
    if (!this.config.enabled) {
      this.log.info('retrieval: dense search disabled by config, BM25 only');
      return;
    }
    await this.enqueue(() => this.connectAndResync());
    const everyMs = Math.max(50, (this.config.retry_interval_sec ?? 10) * 1000);
    this.timer = setInterval(() => void this.checkHealth(), everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
    if (this.timer) clearInterval(this.timer);
    await this.queue;
    await this.chromaProcess?.stop();
    this.denseReady = false;
  }

  /** Full reconciliation with the registry; resolves when done (or degraded). */
  resync(): Promise<void> {
    for (const record of this.registry.list()) this.updateLexical(record.descriptor.id);
    return this.enqueue(() => (this.denseReady ? this.fullResync() : this.connectAndResync()));
  }

  /** Resolves once every queued sync job has run. */
  idle(): Promise<void> {
    return this.queue;
  }

  status(): RetrievalStatus {
    const status: RetrievalStatus = {
      state: !this.config.enabled ? 'disabled' : this.denseReady ? 'ok' : 'degraded',
      embedder: this.embedder.name,
      indexed: this.pluginBm25.size,
    };
    const dimension = this.embedder.dimension();
    if (dimension !== undefined) status.dimension = dimension;
    if (status.state === 'degraded') status.reason = this.degradedReason ?? 'dense index starting';
    const url = this.index?.url ?? this.chromaProcess?.url;
    if (url) status.chroma_url = url;
    return status;
  }

  async search(query: string, options: SearchOptions = {}): Promise<SearchResponse> {
    const checked = checkSearchRequest(query, options.k, this.config.top_k);
    if (!checked.ok) {
      return { query: typeof query === 'string' ? query.slice(0, 200) : '', k: 0, hits: [], mode: this.denseReady ? 'hybrid' : 'bm25', error: checked.error };
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
    const index = this.index;
    if (!this.denseReady || !index) return undefined;
    try {
      const [vector] = await this.embed([text]);
      const n = Math.max(this.config.dense_candidates ?? 400, k * 20);
      return await index.query(vector!, n);
    } catch (err) {
      this.degrade(err);
      return undefined;
    }
  }

  private async embed(texts: string[]): Promise<number[][]> {
    this.embedded += texts.length;
    try {
      return await this.embedder.embed(texts);
    } catch (err) {
      throw new EmbedderError(err instanceof Error ? err.message : String(err));
    }
  }

  // ---- sync -----------------------------------------------------------------------------------------

  private onChange(pluginId: string): void {
    this.updateLexical(pluginId);
    if (!this.config.enabled || this.stopped) return;
    void this.enqueue(async () => {
      if (this.denseReady) await this.reconcile([pluginId]);
      // While degraded nothing is lost: recovery runs a full resync against the registry.
    });
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

  private enqueue(job: () => Promise<void>): Promise<void> {
    const run = this.queue.then(async () => {
      try {
        await job();
      } catch (err) {
        this.degrade(err);
      }
    });
    this.queue = run;
    return run;
  }

  private async connectAndResync(): Promise<void> {
    if (this.stopped) return;
    try {
      const url = await this.chromaUrl();
      const index = new ChromaIndex({ url, collection: this.config.chroma.collection, embedderName: this.embedder.name, log: this.log });
      const recreated = await index.open(this.embedder.dimension(), async () => (await this.embed(['dimension probe']))[0]!.length);
      if (recreated) this.indexedHashes = new Map();
      this.index = index;
      await this.fullResync();
      if (this.degradedReason) this.log.info({ was: this.degradedReason }, 'retrieval recovered: hybrid search back');
      this.denseReady = true;
      this.degradedReason = undefined;
    } catch (err) {
      this.degrade(err);
    }
  }

  private async chromaUrl(): Promise<string> {
    const external = this.config.chroma.url ?? process.env.HOMECLAW_CHROMA_URL ?? null;
    if (external) return external.replace(/\/+$/, '');
    this.chromaProcess ??= new ChromaProcess({ dataDir: join(this.config.data_dir, 'chroma'), port: this.config.chroma.port, log: this.log });
    return this.chromaProcess.start();
  }

  private async fullResync(): Promise<void> {
    const index = this.requireIndex();
    this.indexedHashes = await index.indexedHashes();
    const current = new Map(this.registry.list().map((r) => [r.descriptor.id, r] as const));
    const gone = [...this.indexedHashes.keys()].filter((id) => !current.has(id));
    await index.deletePlugins(gone);
    for (const id of gone) this.indexedHashes.delete(id);
    const changed = [...current.keys()].filter((id) => this.indexedHashes.get(id) !== current.get(id)!.content_hash);
    for (let i = 0; i < changed.length; i += SYNC_BATCH) await this.reconcile(changed.slice(i, i + SYNC_BATCH));
    this.log.info({ plugins: current.size, reembedded: changed.length, deleted: gone.length }, 'retrieval index in step with the registry');
  }

  /** Brings the given plugins in step with the registry as it is now. */
  private async reconcile(pluginIds: string[]): Promise<void> {
    const index = this.requireIndex();
    const removed: string[] = [];
    const changed: PluginRecord[] = [];
    for (const id of pluginIds) {
      const record = this.registry.get(id);
      if (!record) removed.push(id);
      else if (this.indexedHashes.get(id) !== record.content_hash) changed.push(record);
    }
    if (removed.length) {
      await index.deletePlugins(removed);
      for (const id of removed) this.indexedHashes.delete(id);
    }
    if (!changed.length) return;
    const docsPerPlugin = changed.map((r) => pluginDocuments(r.descriptor));
    const vectors = await this.embed(docsPerPlugin.flat().map((d) => d.text));
    let offset = 0;
    const batch: PluginVectors[] = changed.map((record, i) => {
      const documents = docsPerPlugin[i]!;
      const slice = vectors.slice(offset, offset + documents.length);
      offset += documents.length;
      return { plugin_id: record.descriptor.id, content_hash: record.content_hash, documents, vectors: slice };
    });
    await index.replacePlugins(batch);
    for (const record of changed) this.indexedHashes.set(record.descriptor.id, record.content_hash);
  }

  private requireIndex(): ChromaIndex {
    if (!this.index) throw new Error('Chroma index not connected');
    return this.index;
  }

  // ---- health ---------------------------------------------------------------------------------------

  private degrade(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    const reason = err instanceof EmbedderError ? `embedder failed: ${message}` : `chroma unavailable: ${message}`;
    if (this.denseReady || this.degradedReason !== reason) {
      this.log.warn({ reason }, 'retrieval degraded to BM25 only');
    }
    this.denseReady = false;
    this.degradedReason = reason.slice(0, 500);
  }

  private async checkHealth(): Promise<void> {
    if (this.stopped || this.recovering) return;
    this.recovering = true;
    try {
      if (this.denseReady) {
        const url = this.index?.url;
        if (url && !(await chromaHeartbeat(url))) this.degrade(new Error(`no heartbeat from ${url}`));
        return;
      }
      await this.enqueue(() => this.connectAndResync());
    } finally {
      this.recovering = false;
    }
  }
}

function chooseEmbedder(config: CreateRetrievalOptions['config']): Embedder {
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
  return new UseLiteEmbedder();
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
function rankCapabilities(
  record: PluginRecord,
  pluginScore: number,
  lexical: Map<string, number>,
  dense: Map<string, number>,
): CapabilityMatch[] {
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

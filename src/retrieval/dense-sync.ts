// The dense half of retrieval kept in step with the registry: the Chroma connection, the embedder, and
// the indexing backlog.
//
// Sync: the registry is the truth. A registry event marks the plugin dirty when its content hash differs
// from what Chroma holds (a health change costs nothing); one drain job embeds the dirty plugins in
// batches of SYNC_BATCH plugins, each read from the registry when its turn comes, so an event that
// arrives during the work is applied after it and never lost. The embedder cuts each batch into small
// indexing batches that yield to queries. Every job (connect, full resync, drain) runs on one serial
// queue. On start and after an outage the whole registry is reconciled: an unchanged content hash costs
// nothing, a changed one is re-embedded, a removed plugin is deleted from Chroma.
//
// Degrade, never fail: when Chroma or the embedder fails, search answers from BM25 alone, the reason is
// kept for /api/status, and a timer retries; a restarted embedding worker triggers recovery at once.
import { join } from 'node:path';
import type { RetrievalConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { PluginRecord } from '../registry/record.js';
import type { RegistryApi } from '../registry/registry-api.js';
import { ChromaIndex, type PluginVectors } from './chroma-index.js';
import { ChromaProcess, chromaHeartbeat } from './chroma-process.js';
import type { EmbedPriority, Embedder, EmbedderEvent } from './embedder.js';
import { pluginDocuments } from './plugin-documents.js';
import { errorMessage } from '../kit/error-message.js';

export interface DenseSyncOptions {
  config: RetrievalConfig & { data_dir: string; retry_interval_sec?: number };
  registry: RegistryApi;
  log: Logger;
  embedder: Embedder;
}

export class EmbedderError extends Error {}

/** Plugins embedded per Chroma write: small enough that newly registered plugins become findable soon. */
const SYNC_BATCH = 16;

export class DenseSync {
  private readonly config: DenseSyncOptions['config'];
  private readonly registry: RegistryApi;
  private readonly log: Logger;
  private readonly embedder: Embedder;
  private chromaProcess: ChromaProcess | undefined;
  private index: ChromaIndex | undefined;
  private indexedHashes = new Map<string, string>();
  private ready = false;
  private degradedReason: string | undefined;
  private embedded = 0;
  private queue: Promise<void> = Promise.resolve();
  /** Plugins whose documents differ from Chroma's and wait for the drain. */
  private readonly dirty = new Set<string>();
  private drainQueued = false;
  private inProgress = 0;
  private resyncRemaining = 0;
  private recoveryQueued = false;
  private timer: NodeJS.Timeout | undefined;
  private offEmbedder: (() => void) | undefined;
  private checking = false;
  private stopped = false;

  constructor(options: DenseSyncOptions) {
    this.config = options.config;
    this.registry = options.registry;
    this.log = options.log;
    this.embedder = options.embedder;
  }

  async start(): Promise<void> {
    this.embedder.start?.();
    this.offEmbedder = this.embedder.onEvent?.((event) => this.onEmbedderEvent(event));
    await this.enqueue(() => this.connectAndResync());
    const everyMs = Math.max(50, (this.config.retry_interval_sec ?? 10) * 1000);
    this.timer = setInterval(() => void this.checkHealth(), everyMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.offEmbedder?.();
    if (this.timer) clearInterval(this.timer);
    await this.queue;
    await this.chromaProcess?.stop();
    this.ready = false;
  }

  /** The Chroma index while dense search is available; undefined while degraded or starting. */
  denseIndex(): ChromaIndex | undefined {
    return this.ready ? this.index : undefined;
  }

  isReady(): boolean {
    return this.ready;
  }

  reason(): string | undefined {
    return this.ready ? undefined : (this.degradedReason ?? 'dense index starting');
  }

  url(): string | undefined {
    return this.index?.url ?? this.chromaProcess?.url;
  }

  /** Plugins waiting to be embedded: dirty ones, the batch being embedded, and what a resync has left. */
  backlog(): number {
    return this.dirty.size + this.inProgress + this.resyncRemaining;
  }

  /** Texts embedded since start (documents and queries alike). */
  embeddingCalls(): number {
    return this.embedded;
  }

  /** A registry event for this plugin: schedule it when its documents differ from what is indexed. */
  changed(pluginId: string): void {
    if (this.stopped) return;
    const record = this.registry.get(pluginId);
    const indexed = this.indexedHashes.get(pluginId);
    if (record ? indexed === record.content_hash : indexed === undefined) return;
    this.dirty.add(pluginId);
    if (this.drainQueued) return;
    this.drainQueued = true;
    void this.enqueue(async () => {
      this.drainQueued = false;
      await this.drain();
    });
  }

  /** Full reconciliation with the registry; resolves when done (or degraded). */
  resync(): Promise<void> {
    return this.enqueue(() => (this.ready ? this.fullResync() : this.connectAndResync()));
  }

  /** Resolves once every queued sync job has run, including jobs queued while waiting. */
  async idle(): Promise<void> {
    for (;;) {
      const current = this.queue;
      await current;
      if (current === this.queue) return;
    }
  }

  async embed(texts: string[], priority: EmbedPriority): Promise<number[][]> {
    this.embedded += texts.length;
    try {
      return await this.embedder.embed(texts, { priority });
    } catch (err) {
      throw new EmbedderError(errorMessage(err));
    }
  }

  degrade(err: unknown): void {
    const message = errorMessage(err);
    const reason = err instanceof EmbedderError ? `embedder failed: ${message}` : `chroma unavailable: ${message}`;
    if (this.ready || this.degradedReason !== reason) this.log.warn({ reason }, 'retrieval degraded to BM25 only');
    this.ready = false;
    this.degradedReason = reason.slice(0, 500);
  }

  // ---- jobs ---------------------------------------------------------------------------------------

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
      await this.embedder.ready?.().catch((err: unknown) => {
        throw new EmbedderError(errorMessage(err));
      });
      const url = await this.chromaUrl();
      const index = new ChromaIndex({ url, collection: this.config.chroma.collection, embedderName: this.embedder.name, log: this.log });
      const recreated = await index.open(this.embedder.dimension(), async () => (await this.embed(['dimension probe'], 'index'))[0]!.length);
      if (recreated) this.indexedHashes = new Map();
      this.index = index;
      await this.fullResync();
      if (this.degradedReason) this.log.info({ was: this.degradedReason }, 'retrieval recovered: hybrid search back');
      this.ready = true;
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
    // Everything dirty so far is covered here; events from now on mark plugins dirty again.
    this.dirty.clear();
    const current = new Map(this.registry.list().map((r) => [r.descriptor.id, r] as const));
    const gone = [...this.indexedHashes.keys()].filter((id) => !current.has(id));
    await index.deletePlugins(gone);
    for (const id of gone) this.indexedHashes.delete(id);
    const changed = [...current.keys()].filter((id) => this.indexedHashes.get(id) !== current.get(id)!.content_hash);
    this.resyncRemaining = changed.length;
    try {
      for (let i = 0; i < changed.length; i += SYNC_BATCH) {
        const batch = changed.slice(i, i + SYNC_BATCH);
        await this.reconcile(batch);
        this.resyncRemaining -= batch.length;
      }
    } finally {
      this.resyncRemaining = 0;
    }
    this.log.info({ plugins: current.size, reembedded: changed.length, deleted: gone.length }, 'retrieval index in step with the registry');
  }

  private async drain(): Promise<void> {
    while (this.ready && !this.stopped && this.dirty.size > 0) {
      const batch = [...this.dirty].slice(0, SYNC_BATCH);
      for (const id of batch) this.dirty.delete(id);
      this.inProgress = batch.length;
      try {
        await this.reconcile(batch);
      } finally {
        this.inProgress = 0;
      }
    }
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
    const vectors = await this.embed(
      docsPerPlugin.flat().map((d) => d.text),
      'index',
    );
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

  // ---- health -------------------------------------------------------------------------------------

  private onEmbedderEvent(event: EmbedderEvent): void {
    if (this.stopped) return;
    if (event.kind === 'worker-lost') {
      this.degrade(new EmbedderError(event.reason));
      return;
    }
    // A replacement worker is up: recover now rather than at the next retry tick.
    if (event.after_failure && !this.ready && !this.recoveryQueued) {
      this.recoveryQueued = true;
      void this.enqueue(async () => {
        this.recoveryQueued = false;
        if (!this.ready) await this.connectAndResync();
      });
    }
  }

  private async checkHealth(): Promise<void> {
    if (this.stopped || this.checking) return;
    this.checking = true;
    try {
      if (this.ready) {
        const url = this.index?.url;
        if (url && !(await chromaHeartbeat(url))) this.degrade(new Error(`no heartbeat from ${url}`));
        return;
      }
      await this.enqueue(() => this.connectAndResync());
    } finally {
      this.checking = false;
    }
  }
}

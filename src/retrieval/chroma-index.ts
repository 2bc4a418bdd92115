// The dense half of the index: one Chroma collection holding the vectors of every plugin document.
// Chroma never embeds anything itself (its default embedding function downloads a model): vectors are
// always passed in. The collection metadata records the embedder and the document layout; a mismatch
// drops and recreates the collection so vectors of two models are never mixed. Every document carries
// its plugin's content hash in its metadata, so what is already indexed survives restarts and an
// unchanged descriptor is never embedded again.
import { ChromaClient, type Collection, type Metadata } from 'chromadb';
import type { Logger } from '../log.js';
import type { DocumentKind, IndexDocument } from './plugin-documents.js';
import { documentFromId, INDEX_LAYOUT_VERSION } from './plugin-documents.js';

export interface DenseMatch {
  plugin_id: string;
  kind: DocumentKind;
  capability_id?: string;
  /** Cosine similarity in [-1, 1]. */
  similarity: number;
}

export interface PluginVectors {
  plugin_id: string;
  content_hash: string;
  documents: IndexDocument[];
  vectors: number[][];
}

export interface ChromaIndexOptions {
  url: string;
  collection: string;
  embedderName: string;
  log: Logger;
}

const PAGE = 1_000;
/**
 * Documents per add call. The Chroma client encodes every vector to base64 on the calling thread
 * (~0.1-0.2 ms each); small pages keep each slice of that work short, so the event loop serves MQTT and
 * HTTP between them instead of stalling for one large write.
 */
const ADD_PAGE = 32;

export class ChromaIndex {
  private readonly client: ChromaClient;
  private collection: Collection | undefined;
  private documentCount = 0;

  constructor(private readonly options: ChromaIndexOptions) {
    const url = new URL(options.url);
    this.client = new ChromaClient({
      host: url.hostname,
      port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
      ssl: url.protocol === 'https:',
    });
  }

  get url(): string {
    return this.options.url;
  }

  async heartbeat(): Promise<void> {
    await this.client.heartbeat();
  }

  /**
   * Opens (or creates) the collection for this embedder. Returns true when it had to be (re)created,
   * i.e. everything must be embedded again. `dimension` is the embedder's when known up front;
   * `probeDimension` is called only when a collection must be created and the dimension is unknown,
   * so reopening an existing collection costs no embedding call.
   */
  async open(dimension: number | undefined, probeDimension: () => Promise<number>): Promise<boolean> {
    await this.client.heartbeat();
    const name = this.options.collection;
    let existing: Collection | undefined;
    try {
      existing = await this.client.getCollection({ name });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    if (existing) {
      const meta = existing.metadata ?? {};
      const sameDimension = dimension === undefined || meta.dimension === dimension;
      if (meta.embedder === this.options.embedderName && sameDimension && meta.layout === INDEX_LAYOUT_VERSION) {
        this.collection = existing;
        this.documentCount = await existing.count();
        return false;
      }
      this.options.log.warn(
        { collection: name, had: meta, embedder: this.options.embedderName, dimension },
        'embedder or index layout changed: recreating the Chroma collection and re-indexing',
      );
      await this.client.deleteCollection({ name });
    }
    const wanted = { embedder: this.options.embedderName, dimension: dimension ?? (await probeDimension()), layout: INDEX_LAYOUT_VERSION };
    this.collection = await this.client.createCollection({
      name,
      embeddingFunction: null,
      metadata: wanted,
      configuration: { hnsw: { space: 'cosine' } },
    });
    this.documentCount = 0;
    return true;
  }

  /** plugin id → content hash of what is stored, read from the plugin documents' metadata. */
  async indexedHashes(): Promise<Map<string, string>> {
    const collection = this.requireCollection();
    const hashes = new Map<string, string>();
    for (let offset = 0; ; offset += PAGE) {
      const page = await collection.get({ where: { kind: 'plugin' }, include: ['metadatas'], limit: PAGE, offset });
      for (const meta of page.metadatas) {
        if (meta && typeof meta.plugin_id === 'string' && typeof meta.content_hash === 'string') {
          hashes.set(meta.plugin_id, meta.content_hash);
        }
      }
      if (page.ids.length < PAGE) break;
    }
    this.documentCount = await collection.count();
    return hashes;
  }

  /** Replaces every document of the given plugins (old documents first deleted, then the new ones added). */
  async replacePlugins(plugins: PluginVectors[]): Promise<void> {
    if (plugins.length === 0) return;
    const collection = this.requireCollection();
    await this.deletePlugins(plugins.map((p) => p.plugin_id));
    const ids: string[] = [];
    const embeddings: number[][] = [];
    const metadatas: Metadata[] = [];
    const documents: string[] = [];
    for (const plugin of plugins) {
      plugin.documents.forEach((doc, i) => {
        ids.push(doc.id);
        embeddings.push(plugin.vectors[i]!);
        documents.push(doc.text);
        const meta: Metadata = { plugin_id: doc.plugin_id, kind: doc.kind, content_hash: plugin.content_hash };
        if (doc.capability_id !== undefined) meta.capability_id = doc.capability_id;
        metadatas.push(meta);
      });
    }
    for (let i = 0; i < ids.length; i += ADD_PAGE) {
      await collection.add({
        ids: ids.slice(i, i + ADD_PAGE),
        embeddings: embeddings.slice(i, i + ADD_PAGE),
        metadatas: metadatas.slice(i, i + ADD_PAGE),
        documents: documents.slice(i, i + ADD_PAGE),
      });
    }
    this.documentCount += ids.length;
  }

  async deletePlugins(pluginIds: string[]): Promise<void> {
    if (pluginIds.length === 0) return;
    const collection = this.requireCollection();
    for (let i = 0; i < pluginIds.length; i += PAGE) {
      const chunk = pluginIds.slice(i, i + PAGE);
      await collection.delete({ where: chunk.length === 1 ? { plugin_id: chunk[0]! } : { plugin_id: { $in: chunk } } });
    }
    this.documentCount = await collection.count();
  }

  async query(vector: number[], nResults: number): Promise<DenseMatch[]> {
    const collection = this.requireCollection();
    const n = Math.min(nResults, this.documentCount);
    if (n <= 0) return [];
    // Ids and distances only: a document's id names its plugin, kind and capability, and leaving out the
    // metadata spares Chroma a lookup and the Core a parse for each of the hundreds of candidates.
    const result = await collection.query({ queryEmbeddings: [vector], nResults: n, include: ['distances'] });
    const ids = result.ids[0] ?? [];
    const distances = result.distances[0] ?? [];
    const matches: DenseMatch[] = [];
    ids.forEach((id, i) => {
      const distance = distances[i];
      const document = documentFromId(id);
      if (!document || typeof distance !== 'number') return;
      const match: DenseMatch = { plugin_id: document.plugin_id, kind: document.kind, similarity: 1 - distance };
      if (document.capability_id !== undefined) match.capability_id = document.capability_id;
      matches.push(match);
    });
    return matches;
  }

  count(): number {
    return this.documentCount;
  }

  private requireCollection(): Collection {
    if (!this.collection) throw new Error('Chroma collection not open');
    return this.collection;
  }
}

function isNotFound(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return err.constructor.name === 'ChromaNotFoundError' || /not found|does not exist/i.test(err.message);
}

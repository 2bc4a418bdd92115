// What the conversation engine, the HTTP API, the CLI and the MCP server ask of retrieval.
import type { PluginRecord } from '../registry/record.js';
import type { EmbedderHealth } from './embedder.js';
import type { QueryCacheStats } from './query-cache.js';

export interface CapabilityMatch {
  capability_id: string;
  score: number;
}

export interface PluginHit {
  plugin_id: string;
  /** Fused score; comparable within one response only. */
  score: number;
  bm25_score?: number;
  dense_score?: number;
  /** Why the plugin is in the list. */
  reason: 'ranked' | 'pinned' | 'forced';
  /** Capabilities of the plugin, best match first. */
  capabilities: CapabilityMatch[];
  record: PluginRecord;
}

export interface SearchOptions {
  k?: number;
  /** Include stale/offline plugins (default false: only routable ones). */
  include_unroutable?: boolean;
  /** Only plugins this accepts are ranked (e.g. those the asking user's policy lets them reach). */
  filter?: (record: PluginRecord) => boolean;
}

export interface SearchResponse {
  query: string;
  k: number;
  hits: PluginHit[];
  /** 'hybrid' normally, 'bm25' while Chroma or the embedder is down. */
  mode: 'hybrid' | 'bm25' | 'dense';
  /** Set when the request was refused (empty query, k < 1, ...): hits is empty. Show it to the user. */
  error?: string;
  /** Notes about adjustments made: the query was truncated, k was clamped. */
  warnings?: string[];
}

export interface RetrievalStatus {
  state: 'ok' | 'degraded' | 'disabled';
  reason?: string;
  embedder: string;
  dimension?: number;
  indexed: number;
  chroma_url?: string;
  /** Plugins registered or changed whose documents wait to be embedded and written to Chroma. */
  backlog?: number;
  /** The embedding workers (offline model): how many are up, restarts, queued work, the last failure. */
  embedding?: EmbedderHealth;
  query_cache?: QueryCacheStats;
}

export interface PluginSearchApi {
  /** Rejects only on programmer error; bad queries and k answer with an error the caller can show. */
  search(query: string, options?: SearchOptions): Promise<SearchResponse>;
  status(): RetrievalStatus;
}

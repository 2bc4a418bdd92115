// What retrieval needs from a sentence embedder. Vectors come back L2-normalised so cosine similarity
// is a dot product and vectors from one embedder are comparable across restarts.

/**
 * query: a user is waiting for this vector (search); it goes ahead of indexing work.
 * index: documents of registered plugins; bounded batches that yield to queries.
 */
export type EmbedPriority = 'query' | 'index';

export interface EmbedOptions {
  priority?: EmbedPriority;
}

/** How an embedder that runs its model elsewhere (worker threads) is doing; shown in /api/status. */
export interface EmbedderHealth {
  workers: number;
  ready_workers: number;
  restarts: number;
  queued_queries: number;
  queued_index_texts: number;
  /** The largest share of a worker's time spent indexing (1: no rest between indexing batches). */
  index_duty_cycle?: number;
  /** Workers pausing between indexing batches to keep within the duty cycle (they still answer queries). */
  resting_workers?: number;
  /** The latest failure (a worker that threw or exited), with when it happened. */
  last_failure?: string;
  last_failure_at?: number;
}

export type EmbedderEvent =
  /** A worker died or hung; it is being restarted. */
  | { kind: 'worker-lost'; reason: string }
  /** A worker (re)started and loaded its model. */
  | { kind: 'worker-ready'; after_failure: boolean };

export interface Embedder {
  /** Stable name recorded in the Chroma collection metadata; a different name means re-index. */
  readonly name: string;
  /** Known up front for fixed models; otherwise learned from the first embedding. */
  dimension(): number | undefined;
  embed(texts: string[], options?: EmbedOptions): Promise<number[][]>;
  /** Starts the model in the background (worker threads); embed() also starts it when needed. */
  start?(): void;
  /** Resolves when the model can embed; rejects when it failed to load (a later call tries again). */
  ready?(): Promise<void>;
  health?(): EmbedderHealth;
  /** Worker lifecycle events; returns the unsubscribe function. */
  onEvent?(listener: (event: EmbedderEvent) => void): () => void;
  close?(): Promise<void>;
}

export function normalise(vector: ArrayLike<number>): number[] {
  let sum = 0;
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!;
  const norm = Math.sqrt(sum) || 1;
  return Array.from(vector, (v) => v / norm);
}

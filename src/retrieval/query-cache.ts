// Query embeddings by text, least recently used out first: a repeated question ("what time is it?",
// "turn off the lights") costs no model time. Identical questions asked at the same moment share one
// embedding instead of queueing twice. Only successes are kept: a failed embedding is asked again.

export interface QueryCacheStats {
  size: number;
  capacity: number;
  hits: number;
  misses: number;
}

export class QueryEmbeddingCache {
  private readonly entries = new Map<string, number[]>();
  private readonly inFlight = new Map<string, Promise<number[]>>();
  private hits = 0;
  private misses = 0;

  /** capacity 0 disables the cache (concurrent identical questions are still shared). */
  constructor(private readonly capacity: number) {}

  /** The cached vector, or the one `compute` produces (then remembered). */
  async get(text: string, compute: (text: string) => Promise<number[]>): Promise<number[]> {
    const cached = this.entries.get(text);
    if (cached) {
      this.hits++;
      // Map keeps insertion order: re-inserting marks the entry as the most recently used.
      this.entries.delete(text);
      this.entries.set(text, cached);
      return cached;
    }
    const pending = this.inFlight.get(text);
    if (pending) {
      this.hits++;
      return pending;
    }
    this.misses++;
    const computing = compute(text).then((vector) => {
      this.remember(text, vector);
      return vector;
    });
    this.inFlight.set(text, computing);
    try {
      return await computing;
    } finally {
      this.inFlight.delete(text);
    }
  }

  clear(): void {
    this.entries.clear();
  }

  stats(): QueryCacheStats {
    return { size: this.entries.size, capacity: this.capacity, hits: this.hits, misses: this.misses };
  }

  private remember(text: string, vector: number[]): void {
    if (this.capacity <= 0) return;
    this.entries.set(text, vector);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }
}

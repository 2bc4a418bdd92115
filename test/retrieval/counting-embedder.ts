// Wraps a real embedder so tests can make it fail on demand (to exercise degraded mode).
import type { Embedder } from '../../src/retrieval/embedder.js';

export class SwitchableEmbedder implements Embedder {
  failing = false;
  constructor(private readonly inner: Embedder) {}
  get name(): string {
    return this.inner.name;
  }
  dimension(): number | undefined {
    return this.inner.dimension();
  }
  async embed(texts: string[]): Promise<number[][]> {
    if (this.failing) throw new Error('model crashed (test)');
    return this.inner.embed(texts);
  }
}

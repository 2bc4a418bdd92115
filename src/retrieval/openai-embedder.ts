// Any OpenAI-compatible /v1/embeddings endpoint (OpenAI, Ollama, llama.cpp server) via the openai package.
import OpenAI from 'openai';
import type { Embedder } from './embedder.js';
import { normalise } from './embedder.js';

export interface OpenAiEmbedderOptions {
  base_url: string | null;
  model: string;
  api_key: string | null;
  /** Optional: when known, the collection can be created without a probe call. */
  dimension?: number;
  timeout_ms?: number;
  batch_size?: number;
}

const MAX_CHARS = 8_000;

export class OpenAiEmbedder implements Embedder {
  readonly name: string;
  private readonly client: OpenAI;
  private knownDimension: number | undefined;

  constructor(private readonly options: OpenAiEmbedderOptions) {
    this.name = `openai:${options.model}`;
    this.knownDimension = options.dimension;
    this.client = new OpenAI({
      baseURL: options.base_url ?? undefined,
      // Local servers (Ollama, llama.cpp) need no key, but the client insists on one.
      apiKey: options.api_key ?? 'not-needed',
      timeout: options.timeout_ms ?? 30_000,
      maxRetries: 0,
    });
  }

  dimension(): number | undefined {
    return this.knownDimension;
  }

  async embed(texts: string[]): Promise<number[][]> {
    const batchSize = this.options.batch_size ?? 64;
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += batchSize) {
      const input = texts.slice(i, i + batchSize).map((t) => (t.trim() === '' ? ' ' : t.slice(0, MAX_CHARS)));
      const response = await this.client.embeddings.create({ model: this.options.model, input, encoding_format: 'float' });
      const byIndex = [...response.data].sort((a, b) => a.index - b.index);
      if (byIndex.length !== input.length) {
        throw new Error(`embedding endpoint returned ${byIndex.length} vectors for ${input.length} inputs`);
      }
      for (const item of byIndex) {
        const vector = normalise(item.embedding);
        if (this.knownDimension !== undefined && vector.length !== this.knownDimension) {
          throw new Error(`embedding endpoint returned dimension ${vector.length}, expected ${this.knownDimension}`);
        }
        this.knownDimension = vector.length;
        out.push(vector);
      }
    }
    return out;
  }
}

// The OpenAI-compatible embedder against a tiny local /v1/embeddings server, and the re-index that
// follows a change of embedder (vectors of two models are never mixed in one collection).
import { ChromaClient } from 'chromadb';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { OpenAiEmbedder } from '../../src/retrieval/openai-embedder.js';
import { createRetrieval } from '../../src/retrieval/retrieval.js';
import { startChroma, type TestChroma } from '../helpers/chroma.js';
import { HOME_PLUGINS, newRegistry, retrievalConfig } from './fixtures.js';

interface Seen {
  model: string;
  inputs: string[];
  authorization: string | undefined;
}

/** Bag-of-letters vectors, deliberately not normalised, of a dimension chosen per model. */
function vectorFor(text: string, dimension: number): number[] {
  const v = new Array<number>(dimension).fill(0.5);
  for (const c of text.toLowerCase()) v[c.charCodeAt(0) % dimension]! += 3;
  return v;
}

let server: Server;
let baseUrl: string;
const seen: Seen[] = [];
let chroma: TestChroma;

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { model: string; input: string[] };
      seen.push({ model: parsed.model, inputs: parsed.input, authorization: req.headers.authorization });
      if (req.url !== '/v1/embeddings' || parsed.model === 'broken') {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'boom' } }));
        return;
      }
      const dimension = parsed.model === 'small' ? 16 : 48;
      // Answer out of order: the client must reorder by index.
      const data = parsed.input.map((text, index) => ({ object: 'embedding', index, embedding: vectorFor(text, dimension) })).reverse();
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data, model: parsed.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  chroma = await startChroma();
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  await chroma?.stop();
});

describe('OpenAiEmbedder', () => {
  it('sends batches with the model and key, returns normalised vectors in input order', async () => {
    const embedder = new OpenAiEmbedder({ base_url: baseUrl, model: 'large', api_key: 'sk-test', batch_size: 2 });
    expect(embedder.name).toBe('openai:large');
    expect(embedder.dimension()).toBeUndefined();
    seen.length = 0;
    const vectors = await embedder.embed(['alpha', 'beta', 'gamma']);
    expect(seen.map((s) => s.inputs)).toEqual([['alpha', 'beta'], ['gamma']]);
    expect(seen[0]).toMatchObject({ model: 'large', authorization: 'Bearer sk-test' });
    expect(vectors).toHaveLength(3);
    for (const v of vectors) expect(Math.hypot(...v)).toBeCloseTo(1, 6);
    const expected = vectorFor('beta', 48);
    const norm = Math.hypot(...expected);
    expect(vectors[1]![0]).toBeCloseTo(expected[0]! / norm, 6);
    expect(embedder.dimension()).toBe(48);
  });

  it('rejects when the endpoint fails', async () => {
    const embedder = new OpenAiEmbedder({ base_url: baseUrl, model: 'broken', api_key: null });
    await expect(embedder.embed(['x'])).rejects.toThrow();
  });
});

describe('changing the embedder', () => {
  it('recreates the collection and re-indexes everything instead of mixing vectors', async () => {
    const registry = newRegistry();
    for (const descriptor of HOME_PLUGINS) registry.register({ descriptor, owner: 'api' });
    const collection = 'switch_test';
    const make = async (model: string) =>
      createRetrieval({
        config: {
          ...retrievalConfig({ collection, url: chroma.url, data_dir: '' }),
          embedder: { kind: 'openai', base_url: baseUrl, model, api_key: null },
        },
        registry,
        log: silentLogger(),
      });
    const url = new URL(chroma.url);
    const client = new ChromaClient({ host: url.hostname, port: Number(url.port) });

    const first = await make('large');
    await first.start();
    expect(first.status()).toMatchObject({ state: 'ok', embedder: 'openai:large', dimension: 48 });
    const firstCount = await (await client.getCollection({ name: collection })).count();
    await first.stop();

    const same = await make('large');
    await same.start();
    // Reopening an existing collection costs nothing, even with the dimension not configured.
    expect(same.embeddingCalls()).toBe(0);
    await same.stop();

    const second = await make('small');
    await second.start();
    const col = await client.getCollection({ name: collection });
    expect(col.metadata).toMatchObject({ embedder: 'openai:small', dimension: 16 });
    expect(await col.count()).toBe(firstCount);
    expect(second.embeddingCalls()).toBe(1 + firstCount);
    expect((await second.search('play some jazz', { k: 3 })).mode).toBe('hybrid');
    await second.stop();
  });
});

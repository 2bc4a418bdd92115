// Retrieval speed and scale: query latency p50/p99 with 10, 100, 1,000 and 10,000 registered plugins
// (baseline in the same run: BM25 alone, no embedding, no Chroma), time to index 1,000 new plugins with
// real embeddings, a resync of 1,000 unchanged plugins (embedding calls must be 0), and the prompt size
// of the top-k plugin descriptions against putting every plugin in the prompt.
//
// Plugins are synthesised from the MetaTool tool texts. Embedding 10,000 texts with USE-lite takes
// ~5 min on 2 cores, so the latency runs reuse the vectors of the 199 real tools with a small seeded
// perturbation per synthetic plugin (the index, Chroma and the query path are real; query vectors are
// computed for real on every query). The "index 1,000" row embeds every text for real.
//   node dist/scripts/bench/retrieval-scale.js [dataset_dir]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RetrievalConfig } from '../../src/config/types.js';
import { silentLogger } from '../../src/log.js';
import type { PluginDescriptor } from '../../src/protocol/types.js';
import { ChromaProcess } from '../../src/retrieval/chroma-process.js';
import type { Embedder } from '../../src/retrieval/embedder.js';
import { normalise } from '../../src/retrieval/embedder.js';
import { pluginDocuments } from '../../src/retrieval/plugin-documents.js';
import { createRetrieval, type Retrieval } from '../../src/retrieval/retrieval.js';
import type { PluginHit } from '../../src/retrieval/search-api.js';
import { UseLiteEmbedder } from '../../src/retrieval/use-lite-embedder.js';
import { loadDataset, machine, newRegistry, percentile, sample, seededRandom, toolDescriptor, type Dataset } from './retrieval-common.js';

const QUERIES = 200;
const TOP_K = 5;
const VARIANT_WORDS = ['home', 'smart', 'family', 'quick', 'pro', 'lite', 'plus', 'local', 'cloud', 'daily', 'easy', 'prime'];

/** Vectors of known base texts plus seeded noise; anything else (queries) embedded for real. */
class PerturbingEmbedder implements Embedder {
  readonly name: string;
  private readonly baseVectors = new Map<string, number[]>();
  constructor(
    private readonly inner: Embedder,
    private readonly baseOf: Map<string, string>,
  ) {
    this.name = inner.name;
  }
  dimension(): number | undefined {
    return this.inner.dimension();
  }
  async embed(texts: string[]): Promise<number[][]> {
    const bases = [...new Set(texts.map((t) => this.baseOf.get(t)).filter((b): b is string => b !== undefined && !this.baseVectors.has(b)))];
    if (bases.length)
      (await this.inner.embed(bases)).forEach((v, i) => {
        this.baseVectors.set(bases[i]!, v);
      });
    const real = texts.filter((t) => !this.baseOf.has(t));
    const realVectors = real.length ? await this.inner.embed(real) : [];
    let r = 0;
    return texts.map((t) => {
      const base = this.baseOf.get(t);
      if (base === undefined) return realVectors[r++]!;
      const random = seededRandom(hash(t));
      return normalise(this.baseVectors.get(base)!.map((x) => x + (random() - 0.5) * 0.04));
    });
  }
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

/** Synthetic plugins, each remembering the real tool text it varies (the base of its vector). */
function synthesise(data: Dataset, count: number, salt: string): { descriptor: PluginDescriptor; base: string }[] {
  const tools = [...data.tools.entries()];
  return Array.from({ length: count }, (_, i) => {
    const [id, tool] = tools[i % tools.length]!;
    const variant = `${VARIANT_WORDS[i % VARIANT_WORDS.length]} ${VARIANT_WORDS[Math.floor(i / tools.length) % VARIANT_WORDS.length]}`;
    const pid = `${id.slice(0, 40)}-${salt}${i}`;
    return {
      descriptor: toolDescriptor(pid, `${tool.name} ${variant}`, `${tool.description} (${variant} edition ${i})`),
      base: `${tool.name}. ${tool.description}`,
    };
  });
}

/** Approximate tokens (chars/4) of what the LLM prompt carries per plugin: name, description, tools. */
function promptTokens(hits: { record: PluginHit['record'] }[]): number {
  let chars = 0;
  for (const { record } of hits) {
    const d = record.descriptor;
    chars += d.id.length + d.name.length + d.description.length;
    for (const c of d.capabilities)
      chars += c.id.length + c.description.length + c.parameters.reduce((n, p) => n + p.name.length + (p.description?.length ?? 0), 0);
  }
  return Math.round(chars / 4);
}

function config(url: string, collection: string, dataDir: string, enabled = true): RetrievalConfig & { data_dir: string } {
  return {
    enabled,
    top_k: TOP_K,
    chroma: { url, port: 0, collection },
    embedder: { kind: 'use-lite', base_url: null, model: null, api_key: null },
    weights: { bm25: 0.3, dense: 0.7 },
    pinned: [],
    force_include: [],
    data_dir: dataDir,
  };
}

async function timeQueries(retrieval: Retrieval, queries: string[]): Promise<{ p50: number; p99: number; tokens: number }> {
  const latencies: number[] = [];
  let tokens = 0;
  for (const q of queries) {
    const t0 = performance.now();
    const response = await retrieval.search(q, { k: TOP_K });
    latencies.push(performance.now() - t0);
    tokens += promptTokens(response.hits);
  }
  return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), tokens: tokens / queries.length };
}

export async function runRetrievalScaleBench(datasetDir: string): Promise<string> {
  const data = loadDataset(datasetDir);
  const queries = sample(data.single, QUERIES, 7).map((s) => s.query);
  const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-bench-scale-'));
  const chroma = new ChromaProcess({ dataDir: join(dataDir, 'chroma'), port: 0, log: silentLogger() });
  const url = await chroma.start();
  const use = new UseLiteEmbedder();
  await use.embed(['warm up']);
  const log = silentLogger();
  const rows: string[] = [];
  try {
    for (const size of [10, 100, 1_000, 10_000]) {
      const registry = newRegistry();
      const plugins = synthesise(data, size, 's');
      const baseOf = new Map<string, string>();
      for (const { descriptor, base } of plugins) {
        for (const doc of pluginDocuments(descriptor)) baseOf.set(doc.text, base);
        registry.register({ descriptor, owner: 'api' });
      }
      const hybrid = await createRetrieval({
        config: config(url, `bench_scale_${size}`, dataDir),
        registry,
        log,
        embedder: new PerturbingEmbedder(use, baseOf),
      });
      const t0 = performance.now();
      await hybrid.start();
      const indexS = (performance.now() - t0) / 1000;
      const bm25 = await createRetrieval({ config: config(url, 'unused', dataDir, false), registry, log, embedder: use });
      await bm25.start();
      const h = await timeQueries(hybrid, queries);
      const b = await timeQueries(bm25, queries);
      const allTokens = promptTokens(registry.list().map((record) => ({ record })));
      rows.push(
        `| ${size.toLocaleString('en')} | ${h.p50.toFixed(1)} | ${h.p99.toFixed(1)} | ${b.p50.toFixed(2)} | ${b.p99.toFixed(2)} | ${(h.p50 / b.p50).toFixed(0)}× | ${indexS.toFixed(1)} | ${h.tokens.toFixed(0)} | ${allTokens.toLocaleString('en')} | ${(allTokens / h.tokens).toFixed(1)}× |`,
      );
      await hybrid.stop();
      await bm25.stop();
      process.stderr.write(`  scale ${size} done\n`);
    }

    // Index 1,000 new plugins with real embeddings, then restart over the same data: zero embeddings.
    const registry = newRegistry();
    for (const { descriptor } of synthesise(data, 1_000, 'n')) registry.register({ descriptor, owner: 'api' });
    const fresh = await createRetrieval({ config: config(url, 'bench_index_1000', dataDir), registry, log, embedder: use });
    let t0 = performance.now();
    await fresh.start();
    const indexMs = performance.now() - t0;
    const indexCalls = fresh.embeddingCalls();
    t0 = performance.now();
    await fresh.resync();
    const resyncMs = performance.now() - t0;
    const resyncCalls = fresh.embeddingCalls() - indexCalls;
    await fresh.stop();
    const restarted = await createRetrieval({ config: config(url, 'bench_index_1000', dataDir), registry, log, embedder: use });
    t0 = performance.now();
    await restarted.start();
    const restartMs = performance.now() - t0;
    const restartCalls = restarted.embeddingCalls();
    await restarted.stop();

    return [
      `### Retrieval speed and scale (k = ${TOP_K}, ${QUERIES} MetaTool queries per size)`,
      '',
      `Machine: ${machine()}.`,
      '',
      '| plugins | hybrid p50 ms | hybrid p99 ms | BM25-only p50 ms (baseline) | BM25-only p99 ms | hybrid/BM25 p50 | index s (vectors reused) | prompt tokens top-k | prompt tokens all plugins | all/top-k |',
      '|---|---|---|---|---|---|---|---|---|---|',
      ...rows,
      '',
      '| sync operation (1,000 plugins, real USE-lite embeddings) | time | embedding calls |',
      '|---|---|---|',
      `| index 1,000 new plugins | ${(indexMs / 1000).toFixed(1)} s (${(indexMs / indexCalls).toFixed(1)} ms per text) | ${indexCalls} |`,
      `| resync of 1,000 unchanged plugins | ${resyncMs.toFixed(0)} ms | ${resyncCalls} |`,
      `| restart (new process state) over 1,000 unchanged plugins | ${restartMs.toFixed(0)} ms | ${restartCalls} |`,
      '',
      'Hybrid latency includes embedding the query with USE-lite on the CPU; prompt tokens ≈ characters / 4 of name, description and capabilities.',
    ].join('\n');
  } finally {
    await chroma.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  const dir = resolve(argv.find((a) => !a.startsWith('--')) ?? '../shared/datasets/metatool');
  process.stdout.write(`${await runRetrievalScaleBench(dir)}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}

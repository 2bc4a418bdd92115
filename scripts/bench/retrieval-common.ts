// Shared pieces of the retrieval benchmarks: the MetaTool data set, a real registry, a real Chroma
// server in a temp dir, a seeded RNG and percentiles.
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/log.js';
import type { PluginDescriptor } from '../../src/protocol/types.js';
import { TypedEventBus } from '../../src/registry/events.js';
import { Registry } from '../../src/registry/registry.js';
import type { Embedder } from '../../src/retrieval/embedder.js';

export interface Dataset {
  /** plugin id → original tool name */
  tools: Map<string, { name: string; description: string }>;
  idOf: Map<string, string>;
  single: { query: string; tool: string }[];
  multi: { query: string; tools: string[] }[];
}

export function toolId(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^-+/, '')
    .slice(0, 64);
}

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

export function loadDataset(dir: string): Dataset {
  const des = JSON.parse(readFileSync(join(dir, 'plugin_des.json'), 'utf8')) as Record<string, string>;
  const tools = new Map<string, { name: string; description: string }>();
  const idOf = new Map<string, string>();
  for (const [name, description] of Object.entries(des)) {
    const id = toolId(name);
    tools.set(id, { name, description });
    idOf.set(name, id);
  }
  const single = parseCsv(readFileSync(join(dir, 'all_clean_data.csv'), 'utf8'))
    .slice(1)
    .filter((r) => r.length >= 2 && idOf.has(r[1]!))
    .map((r) => ({ query: r[0]!, tool: idOf.get(r[1]!)! }));
  const multiRaw = JSON.parse(readFileSync(join(dir, 'multi_tool_query_golden.json'), 'utf8')) as { query: string; tool: string[] }[];
  const multi = multiRaw.filter((m) => m.tool.every((t) => idOf.has(t))).map((m) => ({ query: m.query, tools: m.tool.map((t) => idOf.get(t)!) }));
  return { tools, idOf, single, multi };
}

export function toolDescriptor(id: string, name: string, description: string): PluginDescriptor {
  return {
    id,
    name,
    description,
    capabilities: [{ id: 'run', name, description, parameters: [], post_process: false }],
    source: 'external',
    type: 'http',
    config: {},
  };
}

export function newRegistry(): Registry {
  const log = silentLogger();
  return new Registry({ db: new Database(':memory:'), events: new TypedEventBus(log), log });
}

/** mulberry32: a fixed seed gives the same sample on every machine. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function sample<T>(items: T[], n: number, seed: number): T[] {
  const random = seededRandom(seed);
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, n);
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function machine(): string {
  let model = cpus()[0]?.model ?? 'unknown CPU';
  try {
    model = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    // not Linux
  }
  return `${cpus().length} cores, ${model}, Node ${process.version}`;
}

/** Memoises vectors by text so several rankers over the same queries embed each query once. */
export class CachingEmbedder implements Embedder {
  private readonly cache = new Map<string, number[]>();
  calls = 0;
  constructor(private readonly inner: Embedder) {}
  get name(): string {
    return this.inner.name;
  }
  dimension(): number | undefined {
    return this.inner.dimension();
  }
  async embed(texts: string[]): Promise<number[][]> {
    const missing = [...new Set(texts.filter((t) => !this.cache.has(t)))];
    if (missing.length) {
      this.calls += missing.length;
      const vectors = await this.inner.embed(missing);
      missing.forEach((t, i) => {
        this.cache.set(t, vectors[i]!);
      });
    }
    return texts.map((t) => this.cache.get(t)!);
  }
}

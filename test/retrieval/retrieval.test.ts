// Retrieval against a real Chroma server and the real offline USE-lite model (loaded once per file).
import { ChromaClient } from 'chromadb';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { createRetrieval, type Retrieval } from '../../src/retrieval/retrieval.js';
import { MAX_K } from '../../src/retrieval/search-request.js';
import { UseLiteEmbedder } from '../../src/retrieval/use-lite-embedder.js';
import { startChroma, type TestChroma } from '../helpers/chroma.js';
import { SwitchableEmbedder } from './counting-embedder.js';
import { HOME_PLUGINS, newRegistry, plugin, retrievalConfig } from './fixtures.js';

const useLite = new UseLiteEmbedder();
let chroma: TestChroma;
let dataDir: string;
let client: ChromaClient;
let collectionSeq = 0;
const running: Retrieval[] = [];

beforeAll(async () => {
  chroma = await startChroma();
  dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-retrieval-'));
  const url = new URL(chroma.url);
  client = new ChromaClient({ host: url.hostname, port: Number(url.port) });
});

afterAll(async () => {
  for (const r of running) await r.stop();
  await chroma?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function setup(options: { registry?: ReturnType<typeof newRegistry>; collection?: string; embedder?: SwitchableEmbedder; extra?: object } = {}) {
  const registry = options.registry ?? newRegistry();
  const collection = options.collection ?? `test_${process.pid}_${++collectionSeq}`;
  const retrieval = await createRetrieval({
    config: { ...retrievalConfig({ collection, url: chroma.url, data_dir: dataDir }), ...options.extra },
    registry,
    log: silentLogger(),
    embedder: options.embedder ?? useLite,
  });
  running.push(retrieval);
  return { registry, retrieval, collection };
}

function registerAll(registry: ReturnType<typeof newRegistry>, descriptors = HOME_PLUGINS): void {
  for (const descriptor of descriptors) expect(registry.register({ descriptor, owner: 'api' }).ok).toBe(true);
}

async function chromaIds(collection: string, pluginId: string): Promise<string[]> {
  const col = await client.getCollection({ name: collection });
  return (await col.get({ where: { plugin_id: pluginId } })).ids;
}

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('hybrid search', () => {
  it('finds the right plugin and capability from everyday phrasing', async () => {
    const { registry, retrieval } = await setup();
    registerAll(registry);
    await retrieval.start();
    expect(retrieval.status()).toMatchObject({ state: 'ok', embedder: 'use-lite-512', dimension: 512, indexed: 5 });

    const cases: [string, string][] = [
      ['is it going to rain this afternoon?', 'weather'],
      ['we are out of milk', 'shopping'],
      ['dim the bedroom lamp', 'lights'],
      ['I want to hear some music', 'music'],
      ['ring in 5 minutes', 'timer'],
    ];
    for (const [query, expected] of cases) {
      const response = await retrieval.search(query, { k: 3 });
      expect(response.mode).toBe('hybrid');
      expect(response.hits[0]?.plugin_id, query).toBe(expected);
    }
    const colour = await retrieval.search('make the lights red', { k: 1 });
    expect(colour.hits[0]?.plugin_id).toBe('lights');
    expect(colour.hits[0]?.capabilities[0]?.capability_id).toBe('set_colour');
    expect(colour.hits[0]?.capabilities).toHaveLength(3);
    expect(colour.hits[0]?.dense_score).toBeGreaterThan(0);
  });

  it('always includes pinned plugins and force-include rules, on top of k', async () => {
    const { registry, retrieval } = await setup({
      extra: {
        pinned: ['music'],
        force_include: [
          { pattern: '\\bgrocer', plugin_id: 'timer' },
          { pattern: '([', plugin_id: 'x' },
        ],
      },
    });
    registerAll(registry);
    await retrieval.start();
    const response = await retrieval.search('any groceries left?', { k: 1 });
    expect(response.hits.map((h) => [h.plugin_id, h.reason])).toEqual([
      ['timer', 'forced'],
      ['shopping', 'ranked'],
      ['music', 'pinned'],
    ]);
  });
});

describe('sync with the registry', () => {
  it('makes zero embedding calls on restart with unchanged descriptors and re-embeds only what changed', async () => {
    const { registry, retrieval, collection } = await setup();
    registerAll(registry);
    await retrieval.start();
    const firstCalls = retrieval.embeddingCalls();
    expect(firstCalls).toBeGreaterThan(0);
    await retrieval.stop();

    const restarted = (await setup({ registry, collection })).retrieval;
    await restarted.start();
    expect(restarted.embeddingCalls()).toBe(0);
    expect(restarted.status().state).toBe('ok');
    expect((await restarted.search('will it snow', { k: 1 })).hits[0]?.plugin_id).toBe('weather');
    expect(restarted.embeddingCalls()).toBe(1); // the query itself

    // One plugin changes: its documents (name + plugin doc + 3 examples) are embedded, nothing else.
    const changed = { ...HOME_PLUGINS[1]!, description: 'Weather, forecast and pollen levels for a city.' };
    registry.register({ descriptor: changed, owner: 'api' });
    await restarted.idle();
    expect(restarted.embeddingCalls()).toBe(1 + 5);
    await restarted.resync();
    expect(restarted.embeddingCalls()).toBe(1 + 5);
  });

  it('deletes a removed plugin from Chroma at once and keeps stale plugins indexed but filtered', async () => {
    const { registry, retrieval, collection } = await setup();
    registerAll(registry);
    await retrieval.start();
    expect(await chromaIds(collection, 'music')).toHaveLength(5);

    expect(registry.unregister('music').ok).toBe(true);
    await retrieval.idle();
    expect(await chromaIds(collection, 'music')).toEqual([]);
    expect((await retrieval.search('play some jazz', { k: 5 })).hits.map((h) => h.plugin_id)).not.toContain('music');

    registry.setState('weather', 'stale', 'missed heartbeats');
    await retrieval.idle();
    const routable = await retrieval.search('will it rain tomorrow', { k: 5 });
    expect(routable.hits.map((h) => h.plugin_id)).not.toContain('weather');
    const all = await retrieval.search('will it rain tomorrow', { k: 5, include_unroutable: true });
    expect(all.hits[0]?.plugin_id).toBe('weather');
    expect(await chromaIds(collection, 'weather')).toHaveLength(5);
  });

  it('applies events that arrive during a resync', async () => {
    const { registry, retrieval, collection } = await setup();
    registerAll(registry);
    await retrieval.start();
    const resync = retrieval.resync();
    registry.register({ descriptor: plugin('vacuum', { description: 'Start the robot vacuum cleaner', examples: ['clean the floor'] }), owner: 'api' });
    registry.unregister('timer');
    await resync;
    await retrieval.idle();
    expect(await chromaIds(collection, 'vacuum')).toHaveLength(3);
    expect(await chromaIds(collection, 'timer')).toEqual([]);
    expect((await retrieval.search('vacuum the living room', { k: 1 })).hits[0]?.plugin_id).toBe('vacuum');
  });
});

describe('bad input', () => {
  let retrieval: Retrieval;
  beforeAll(async () => {
    const ctx = await setup();
    registerAll(ctx.registry, [
      ...HOME_PLUGINS,
      plugin('no-examples', { description: 'Reads the electricity meter and reports power usage' }),
      plugin('twin-a', { name: 'Cat feeder', description: 'Feeds the cat at the scheduled time' }),
      plugin('twin-b', { name: 'Cat feeder', description: 'Feeds the cat at the scheduled time' }),
    ]);
    retrieval = ctx.retrieval;
    await retrieval.start();
  });

  it('answers empty and whitespace queries with a clear error, not an exception', async () => {
    for (const q of ['', '   \n\t ']) {
      const response = await retrieval.search(q);
      expect(response.hits).toEqual([]);
      expect(response.error).toMatch(/query is empty/);
    }
  });

  it('refuses k = 0, negative or fractional k and clamps a huge k', async () => {
    expect((await retrieval.search('lights', { k: 0 })).error).toMatch(/k must be at least 1/);
    expect((await retrieval.search('lights', { k: -3 })).error).toMatch(/k must be at least 1/);
    expect((await retrieval.search('lights', { k: 2.5 })).error).toMatch(/whole number/);
    const huge = await retrieval.search('lights', { k: 1_000_000 });
    expect(huge.error).toBeUndefined();
    expect(huge.k).toBe(MAX_K);
    expect(huge.warnings).toEqual([`k clamped to ${MAX_K}`]);
    expect(huge.hits.length).toBe(8);
  });

  it('truncates a 100 KB query and still answers quickly', async () => {
    const query = `turn on the kitchen lights please. ${'blah '.repeat(20_000)}`;
    const started = Date.now();
    const response = await retrieval.search(query, { k: 3 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(response.warnings?.[0]).toMatch(/query truncated/);
    expect(response.hits[0]?.plugin_id).toBe('lights');
  });

  it('handles non-ASCII and emoji text', async () => {
    for (const q of ['🌧️☔', 'Wie wird das Wetter morgen in München?', '明天会下雨吗', '\u0000\u0001']) {
      const response = await retrieval.search(q, { k: 3 });
      expect(response.error).toBeUndefined();
      expect(response.hits.length).toBe(3);
    }
    expect((await retrieval.search('🎵 play music 🎵', { k: 1 })).hits[0]?.plugin_id).toBe('music');
  });

  it('finds a descriptor with no examples and ranks identical plugins together, deterministically', async () => {
    expect((await retrieval.search('how much power are we using', { k: 1 })).hits[0]?.plugin_id).toBe('no-examples');
    const twins = await retrieval.search('feed the cat', { k: 2 });
    expect(twins.hits.map((h) => h.plugin_id)).toEqual(['twin-a', 'twin-b']);
    expect(twins.hits[0]!.score).toBeCloseTo(twins.hits[1]!.score, 6);
  });
});

describe('degrade, never fail', () => {
  it('falls back to BM25 while Chroma is down and resyncs when it comes back', async () => {
    const { registry, retrieval, collection } = await setup();
    registerAll(registry);
    await retrieval.start();
    expect(retrieval.status().state).toBe('ok');

    await chroma.pause();
    try {
      const during = await retrieval.search('add eggs to the shopping list', { k: 2 });
      expect(during.mode).toBe('bm25');
      expect(during.hits[0]?.plugin_id).toBe('shopping');
      expect(retrieval.status()).toMatchObject({ state: 'degraded' });
      expect(retrieval.status().reason).toMatch(/chroma unavailable/);
      // Changes while Chroma is down are not lost.
      registry.register({ descriptor: plugin('garage', { description: 'Open and close the garage door' }), owner: 'api' });
      registry.unregister('music');
      expect((await retrieval.search('open the garage', { k: 1 })).hits[0]?.plugin_id).toBe('garage');
    } finally {
      await chroma.resume();
    }
    await waitFor(() => retrieval.status().state === 'ok');
    expect(await chromaIds(collection, 'garage')).toHaveLength(2);
    expect(await chromaIds(collection, 'music')).toEqual([]);
    expect((await retrieval.search('lift the garage door', { k: 1 })).mode).toBe('hybrid');
  });

  it('falls back to BM25 while the embedder fails and recovers', async () => {
    const embedder = new SwitchableEmbedder(useLite);
    const { registry, retrieval, collection } = await setup({ embedder });
    registerAll(registry);
    await retrieval.start();
    embedder.failing = true;
    const during = await retrieval.search('play some jazz', { k: 1 });
    expect(during).toMatchObject({ mode: 'bm25', hits: [{ plugin_id: 'music' }] });
    expect(retrieval.status().reason).toMatch(/embedder failed: model crashed/);
    registry.register({ descriptor: plugin('sprinkler', { description: 'Water the garden lawn' }), owner: 'api' });
    embedder.failing = false;
    await waitFor(() => retrieval.status().state === 'ok');
    expect(await chromaIds(collection, 'sprinkler')).toHaveLength(2);
  });

  it('starts degraded when Chroma is unreachable and says why', async () => {
    const registry = newRegistry();
    registerAll(registry);
    const retrieval = await createRetrieval({
      config: retrievalConfig({ collection: 'unreachable', url: 'http://127.0.0.1:9', data_dir: dataDir }),
      registry,
      log: silentLogger(),
      embedder: useLite,
    });
    running.push(retrieval);
    await retrieval.start();
    expect(retrieval.status()).toMatchObject({ state: 'degraded', indexed: 5 });
    expect((await retrieval.search('skip this song', { k: 1 })).hits[0]?.plugin_id).toBe('music');
  });
});

// Retrieval as the Core builds it: the offline model on real worker threads (the embedding pool chosen by
// config), a real Chroma server. A query is answered while a big registration is being indexed; a worker
// that dies or throws degrades search to BM25 with the reason in status() and recovers; repeated
// questions cost no model time.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import type { CapabilitySpec } from '../../src/protocol/types.js';
import { FAULT_EXIT, FAULT_THROW } from '../../src/retrieval/embedding-worker-protocol.js';
import { createRetrieval, type Retrieval } from '../../src/retrieval/retrieval.js';
import { ensureBuilt } from '../helpers/build.js';
import { startChroma, type TestChroma } from '../helpers/chroma.js';
import { HOME_PLUGINS, newRegistry, plugin, retrievalConfig } from './fixtures.js';

// Test-only switch read when the pool is created: marker texts make a real worker exit or throw.
process.env.HOMECLAW_TEST_EMBEDDER_FAULTS = '1';

let chroma: TestChroma;
let dataDir: string;
let collectionSeq = 0;
const running: Retrieval[] = [];

beforeAll(async () => {
  await ensureBuilt();
  chroma = await startChroma();
  dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-retrieval-workers-'));
}, 180_000);

afterAll(async () => {
  for (const r of running) await r.stop();
  await chroma?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function started(extra: object = {}) {
  const registry = newRegistry();
  for (const descriptor of HOME_PLUGINS) expect(registry.register({ descriptor, owner: 'api' }).ok).toBe(true);
  const retrieval = await createRetrieval({
    config: { ...retrievalConfig({ collection: `workers_${process.pid}_${++collectionSeq}`, url: chroma.url, data_dir: dataDir }), ...extra },
    registry,
    log: silentLogger(),
  });
  running.push(retrieval);
  await retrieval.start();
  expect(retrieval.status()).toMatchObject({ state: 'ok', embedder: 'use-lite-512', backlog: 0, embedding: { workers: 1, ready_workers: 1 } });
  return { registry, retrieval };
}

async function waitFor(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

function manyCapabilities(count: number): CapabilitySpec[] {
  return Array.from({ length: count }, (_, i) => ({
    id: `zone_${i}`,
    name: `Irrigation zone ${i}`,
    description: `Open or close the sprinkler valve of irrigation zone ${i} in the garden.`,
    parameters: [{ name: 'minutes', type: 'integer', required: false }],
    post_process: false,
  }));
}

describe('the event loop never waits for the model', () => {
  it('answers a hybrid query while a 256-capability registration is being indexed', async () => {
    const { registry, retrieval } = await started();
    const big = plugin('irrigation', { name: 'Irrigation', description: 'Garden irrigation with 256 zones.', capabilities: manyCapabilities(256) });
    expect(registry.register({ descriptor: big, owner: 'api' }).ok).toBe(true);
    expect(retrieval.status().backlog).toBe(1);

    const response = await retrieval.search('will it rain tomorrow', { k: 1 });
    expect(response.mode).toBe('hybrid');
    expect(response.hits[0]?.plugin_id).toBe('weather');
    // Answered while the big plugin was still waiting to be embedded (258 documents in batches of 8).
    const during = retrieval.status();
    expect(during.backlog).toBe(1);
    expect(during.embedding!.queued_index_texts).toBeGreaterThan(0);

    await retrieval.idle();
    expect(retrieval.status()).toMatchObject({ state: 'ok', backlog: 0, embedding: { queued_index_texts: 0 } });
    const found = await retrieval.search('water the garden in zone 17', { k: 1 });
    expect(found.hits[0]?.plugin_id).toBe('irrigation');
    expect(found.hits[0]?.dense_score).toBeGreaterThan(0);
  });

  it('counts plugins waiting to be embedded as the backlog during a registration burst', async () => {
    const { registry, retrieval } = await started();
    for (let i = 0; i < 40; i++) {
      registry.register({
        descriptor: plugin(`burst-${i}`, { description: `Burst plugin ${i} controls device ${i}`, examples: ['do the thing', `device ${i}`] }),
        owner: 'api',
      });
    }
    expect(retrieval.status().backlog).toBe(40);
    await retrieval.idle();
    expect(retrieval.status().backlog).toBe(0);
  });
});

describe('a worker that dies or throws', () => {
  it('degrades search to BM25 with the reason, restarts the worker and recovers by itself', async () => {
    const { retrieval } = await started({ retry_interval_sec: 3600 });
    const during = await retrieval.search(FAULT_EXIT, { k: 2 });
    expect(during.mode).toBe('bm25');
    expect(during.error).toBeUndefined();
    const degraded = retrieval.status();
    expect(degraded.state).toBe('degraded');
    expect(degraded.reason).toMatch(/embedder failed: embedding worker 0 exited with code 70; restarting it/);
    expect((await retrieval.search('play some jazz', { k: 1 })).hits[0]?.plugin_id).toBe('music');

    // No retry tick within the test (retry_interval_sec is an hour): the restarted worker triggers recovery.
    await waitFor(() => retrieval.status().state === 'ok');
    expect(retrieval.status().embedding).toMatchObject({ ready_workers: 1, restarts: 1 });
    expect(retrieval.status().embedding!.last_failure).toMatch(/exited with code 70/);
    expect((await retrieval.search('put on the radio', { k: 1 })).mode).toBe('hybrid');
  });

  it('degrades when a worker throws and recovers on the next resync', async () => {
    const { retrieval } = await started({ retry_interval_sec: 3600 });
    const during = await retrieval.search(FAULT_THROW, { k: 2 });
    expect(during.mode).toBe('bm25');
    expect(retrieval.status()).toMatchObject({ state: 'degraded', embedding: { ready_workers: 1, restarts: 0 } });
    expect(retrieval.status().reason).toMatch(/embedder failed: .*test fault: the embedding worker threw/);
    await retrieval.resync();
    expect(retrieval.status().state).toBe('ok');
    expect((await retrieval.search('skip this song', { k: 1 })).mode).toBe('hybrid');
  });
});

describe('query embedding cache', () => {
  it('answers a repeated question without model time and shares concurrent identical questions', async () => {
    const { retrieval } = await started({ query_cache_size: 2 });
    const before = retrieval.embeddingCalls();
    const first = await retrieval.search('is it cold outside', { k: 1 });
    expect(retrieval.embeddingCalls()).toBe(before + 1);
    const again = await retrieval.search('is it cold outside', { k: 1 });
    expect(retrieval.embeddingCalls()).toBe(before + 1);
    expect(again.hits.map((h) => [h.plugin_id, h.score])).toEqual(first.hits.map((h) => [h.plugin_id, h.score]));
    expect(retrieval.status().query_cache).toMatchObject({ size: 1, capacity: 2, hits: 1, misses: 1 });

    await Promise.all(Array.from({ length: 5 }, () => retrieval.search('turn the radio on', { k: 1 })));
    expect(retrieval.embeddingCalls()).toBe(before + 2);

    // Least recently used out: with room for two, a third question evicts the oldest one.
    await retrieval.search('set a timer', { k: 1 });
    await retrieval.search('is it cold outside', { k: 1 });
    expect(retrieval.embeddingCalls()).toBe(before + 4);
    expect(retrieval.status().query_cache).toMatchObject({ size: 2, capacity: 2 });
  });
});

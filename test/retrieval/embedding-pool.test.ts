// The embedding pool with real worker threads running the real offline model: queries go ahead of
// indexing, indexing waits for room, a worker that dies or throws is handled without a caller hanging.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import type { EmbedderEvent } from '../../src/retrieval/embedder.js';
import { defaultDutyCycle, EmbeddingPool } from '../../src/retrieval/embedding-pool.js';
import { FAULT_EXIT, FAULT_THROW } from '../../src/retrieval/embedding-worker-protocol.js';
import { USE_LITE_DIMENSION, USE_LITE_NAME, UseLiteEmbedder } from '../../src/retrieval/use-lite-embedder.js';
import { ensureBuilt } from '../helpers/build.js';

const pools: EmbeddingPool[] = [];

function newPool(options: Partial<ConstructorParameters<typeof EmbeddingPool>[0]> = {}): EmbeddingPool {
  const pool = new EmbeddingPool({ name: USE_LITE_NAME, dimension: USE_LITE_DIMENSION, log: silentLogger(), size: 1, ...options });
  pools.push(pool);
  return pool;
}

function cosine(a: number[], b: number[]): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
}

beforeAll(() => ensureBuilt(), 180_000);

afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
});

describe('embedding pool', () => {
  it('returns the same normalised vectors as the model on the calling thread, in order', async () => {
    const pool = newPool();
    const texts = ['turn on the kitchen light', 'will it rain tomorrow', 'add milk to the shopping list'];
    const [fromPool, direct] = await Promise.all([pool.embed(texts, { priority: 'index' }), new UseLiteEmbedder().embed(texts)]);
    expect(fromPool).toHaveLength(3);
    fromPool.forEach((vector, i) => {
      expect(vector).toHaveLength(USE_LITE_DIMENSION);
      expect(cosine(vector, direct[i]!)).toBeGreaterThan(0.9999);
    });
    // Concurrent queries share one worker call and each gets its own vector back.
    const queries = await Promise.all(texts.map((t) => pool.embed([t], { priority: 'query' })));
    queries.forEach(([vector], i) => {
      expect(cosine(vector!, direct[i]!)).toBeGreaterThan(0.9999);
    });
  });

  it('answers a query while a large indexing job is still being embedded', async () => {
    const pool = newPool({ index_batch: 8 });
    await pool.ready();
    const documents = Array.from({ length: 260 }, (_, i) => `capability ${i}: switch device number ${i} on or off in room ${i % 7}`);
    let indexDone = false;
    const indexing = pool.embed(documents, { priority: 'index' }).then((vectors) => {
      indexDone = true;
      return vectors;
    });
    const [query] = await pool.embed(['is the garage door open?'], { priority: 'query' });
    expect(query).toHaveLength(USE_LITE_DIMENSION);
    // The query came back while most of the indexing job was still waiting in the pool.
    expect(indexDone).toBe(false);
    expect(pool.health().queued_index_texts).toBeGreaterThan(100);
    expect(await indexing).toHaveLength(260);
    expect(pool.health().queued_index_texts).toBe(0);
  });

  it('makes an indexing producer wait for room instead of queueing without bound', async () => {
    const pool = newPool({ index_batch: 4, max_queued_index_texts: 12 });
    await pool.ready();
    const batch = (n: number): string[] => Array.from({ length: 10 }, (_, i) => `document ${n}.${i}`);
    const jobs = [pool.embed(batch(1), { priority: 'index' }), pool.embed(batch(2), { priority: 'index' }), pool.embed(batch(3), { priority: 'index' })];
    let peak = 0;
    const watch = setInterval(() => (peak = Math.max(peak, pool.health().queued_index_texts)), 1);
    peak = Math.max(peak, pool.health().queued_index_texts);
    const results = await Promise.all(jobs);
    clearInterval(watch);
    expect(results.map((r) => r.length)).toEqual([10, 10, 10]);
    expect(peak).toBeLessThanOrEqual(12);
  });

  it('replaces a worker that exits: its batch fails, queries fail fast meanwhile, then everything works again', async () => {
    const pool = newPool({ faults: true });
    await pool.ready();
    const events: EmbedderEvent[] = [];
    pool.onEvent((event) => events.push(event));
    await expect(pool.embed([FAULT_EXIT], { priority: 'query' })).rejects.toThrow(/exited with code 70/);
    expect(events[0]).toMatchObject({ kind: 'worker-lost' });
    // While the replacement loads its model, a query is refused at once instead of waiting.
    await expect(pool.embed(['hello'], { priority: 'query' })).rejects.toThrow(/restarting/);
    await pool.ready();
    expect(events.at(-1)).toEqual({ kind: 'worker-ready', after_failure: true });
    expect(pool.health()).toMatchObject({ workers: 1, ready_workers: 1, restarts: 1 });
    expect(pool.health().last_failure).toMatch(/exited with code 70/);
    const [vector] = await pool.embed(['hello again'], { priority: 'query' });
    expect(vector).toHaveLength(USE_LITE_DIMENSION);
  });

  it('fails only the batch of a worker that throws; the worker stays up', async () => {
    const pool = newPool({ faults: true });
    await pool.ready();
    await expect(pool.embed([FAULT_THROW], { priority: 'index' })).rejects.toThrow(/test fault: the embedding worker threw/);
    expect(pool.health()).toMatchObject({ ready_workers: 1, restarts: 0 });
    expect((await pool.embed(['still fine'], { priority: 'query' }))[0]).toHaveLength(USE_LITE_DIMENSION);
  });

  it('ignores the fault markers unless faults are enabled', async () => {
    const pool = newPool();
    const [vector] = await pool.embed([FAULT_EXIT], { priority: 'query' });
    expect(vector).toHaveLength(USE_LITE_DIMENSION);
    expect(pool.health().restarts).toBe(0);
  });

  it('rejects pending work when closed', async () => {
    const pool = newPool();
    const pending = expect(pool.embed(['a', 'b', 'c'], { priority: 'index' })).rejects.toThrow(/closed/);
    await pool.close();
    await pending;
    await expect(pool.embed(['x'])).rejects.toThrow(/closed/);
  });

  it('rests between indexing batches within its duty cycle, still answering queries, and loses no batch', async () => {
    const pool = newPool({ index_batch: 4, index_duty_cycle: 0.05 });
    await pool.ready();
    expect(pool.health().index_duty_cycle).toBe(0.05);
    const documents = Array.from({ length: 12 }, (_, i) => `document ${i}: open the window in room ${i}`);
    const indexing = pool.embed(documents, { priority: 'index' });
    // After its first batch the worker pauses for about nineteen times that batch while work is waiting.
    await expect.poll(() => pool.health().resting_workers, { timeout: 30_000, interval: 2 }).toBe(1);
    expect(pool.health().queued_index_texts).toBeGreaterThan(0);
    const [query] = await pool.embed(['close the window'], { priority: 'query' });
    expect(query).toHaveLength(USE_LITE_DIMENSION);
    const vectors = await indexing;
    const direct = await new UseLiteEmbedder().embed(documents);
    vectors.forEach((vector, i) => {
      expect(cosine(vector, direct[i]!)).toBeGreaterThan(0.9999);
    });
  });

  it('indexes without resting at a duty cycle of 1', async () => {
    const pool = newPool({ index_batch: 2, index_duty_cycle: 1 });
    await pool.ready();
    let resting = 0;
    const indexing = pool.embed(
      Array.from({ length: 16 }, (_, i) => `sentence number ${i}`),
      { priority: 'index' },
    );
    const watch = setInterval(() => (resting = Math.max(resting, pool.health().resting_workers ?? 0)), 1);
    await indexing;
    clearInterval(watch);
    expect(resting).toBe(0);
    expect(pool.health().index_duty_cycle).toBe(1);
  });

  it('halves indexing on machines with two cores or fewer by default', () => {
    expect(defaultDutyCycle(1)).toBe(0.5);
    expect(defaultDutyCycle(2)).toBe(0.5);
    expect(defaultDutyCycle(4)).toBe(1);
  });
});

// The offline sentence encoder on worker threads, so the Core's event loop (broker, dispatcher, HTTP)
// never waits for the model.
//
// One pool, two lanes (embedding-lanes.ts). Query embeddings (a user is waiting) always go first and the
// ones waiting together share one model call (a batch of 4 costs about half as much per text as 4 single
// calls). Indexing work is cut into bounded batches (index_batch texts), so a query waits at most for one
// small batch, never for a 256-capability registration; the indexing lane is bounded and embed() waits
// for room (back-pressure) instead of queueing without limit.
//
// A worker that exits, fails to load or hangs past the watchdog is replaced with backoff; its batch
// fails (the caller falls back to BM25), queries arriving while no worker is up fail at once instead of
// waiting, and listeners hear 'worker-lost' / 'worker-ready' so retrieval can say why and recover.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../log.js';
import { findPackageRoot } from '../kit/package-root.js';
import type { EmbedOptions, Embedder, EmbedderEvent, EmbedderHealth } from './embedder.js';
import { EmbeddingLanes, type Batch } from './embedding-lanes.js';
import type { EmbeddingWorkerData, WorkerReply, WorkerRequest } from './embedding-worker-protocol.js';
import { errorMessage } from '../kit/error-message.js';

export interface EmbeddingPoolOptions {
  /** Recorded in the Chroma collection (the model inside the workers). */
  name: string;
  dimension: number;
  log: Logger;
  /** Worker threads; default max(1, cores - 1). */
  size?: number;
  /** Texts per indexing batch sent to a worker. */
  index_batch?: number;
  /** Most query texts embedded together in one worker call. */
  query_batch?: number;
  /** Indexing texts that may wait in the pool before embed() waits for room. */
  max_queued_index_texts?: number;
  /** A worker busy with one batch longer than this is considered hung and replaced. */
  job_timeout_ms?: number;
  /** Nice value of the worker threads (Linux): above 0 the event loop thread wins the CPU. */
  nice?: number;
  /**
   * The largest share of a worker's time spent on indexing (0 < x <= 1; 0 or absent: defaultDutyCycle()).
   * Below 1, a worker rests after each indexing batch for as long as the batch took times (1 - x) / x,
   * answering only queries, so on a machine with few cores the indexing of a large burst leaves CPU free
   * for calls, the broker and the plugins.
   */
  index_duty_cycle?: number;
  /** Test-only fault markers (see embedding-worker-protocol.ts). */
  faults?: boolean;
  /** The compiled worker script; default: embedding-worker.js next to this module (or in dist/). */
  script?: string;
}

export function defaultWorkerCount(): number {
  return Math.max(1, availableParallelism() - 1);
}

/**
 * With two cores or fewer the one worker would hold a core for the whole of a large indexing job while
 * the event loop, the broker, Chroma and the plugins share the other: there indexing takes at most half
 * of the worker's time (measured: invoke p99 during a 150-plugin burst 2.2-2.6x quiet at full duty, within
 * 2x at half duty, for indexing that takes twice as long). With more cores the others absorb it.
 */
export function defaultDutyCycle(cores = availableParallelism()): number {
  return cores <= 2 ? 0.5 : 1;
}

interface Slot {
  index: number;
  worker: Worker | undefined;
  state: 'starting' | 'idle' | 'busy' | 'down';
  batch?: Batch;
  batchId?: number;
  watchdog?: NodeJS.Timeout;
  restartTimer?: NodeJS.Timeout;
  /** Failed starts in a row: the restart delay doubles with each. */
  failedStarts: number;
  /** The next 'ready' follows a failure. */
  recovering: boolean;
  /** When the current batch was handed to the worker (performance.now()). */
  startedAt?: number;
  /** Until then (performance.now()) the worker takes only queries: its indexing duty cycle is spent. */
  restUntil?: number;
  restTimer?: NodeJS.Timeout;
}

interface Waiter {
  resolve: () => void;
  reject: (error: Error) => void;
}

const MAX_RESTART_DELAY_MS = 10_000;

export class EmbeddingPool implements Embedder {
  readonly name: string;
  private readonly options: EmbeddingPoolOptions;
  private readonly dutyCycle: number;
  private readonly log: Logger;
  private readonly slots: Slot[] = [];
  private readonly lanes: EmbeddingLanes;
  private readyWaiters: Waiter[] = [];
  private readonly listeners = new Set<(event: EmbedderEvent) => void>();
  private nextBatchId = 1;
  private restarts = 0;
  private lastFailure: { message: string; at: number } | undefined;
  private started = false;
  private closed = false;

  constructor(options: EmbeddingPoolOptions) {
    this.options = options;
    this.dutyCycle = options.index_duty_cycle ? Math.min(1, options.index_duty_cycle) : defaultDutyCycle();
    this.name = options.name;
    this.log = options.log;
    this.lanes = new EmbeddingLanes({
      query_batch: options.query_batch ?? 16,
      index_batch: options.index_batch ?? 8,
      max_queued_index_texts: options.max_queued_index_texts ?? 512,
    });
  }

  dimension(): number {
    return this.options.dimension;
  }

  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    const size = Math.max(1, Math.floor(this.options.size ?? defaultWorkerCount()));
    for (let index = 0; index < size; index++) {
      const slot: Slot = { index, worker: undefined, state: 'down', failedStarts: 0, recovering: false };
      this.slots.push(slot);
      this.spawn(slot);
    }
  }

  ready(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('embedding pool is closed'));
    this.start();
    if (this.readyCount() > 0) return Promise.resolve();
    return new Promise((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<number[][]> {
    if (texts.length === 0) return [];
    if (this.closed) throw new Error('embedding pool is closed');
    this.start();
    if (options.priority === 'query') {
      // Nobody should wait seconds for a restarting worker: the caller answers from BM25 instead.
      if (this.readyCount() === 0 && this.slots.some((s) => s.recovering)) {
        throw new Error(`embedding workers are restarting: ${this.lastFailure?.message ?? 'a worker failed'}`);
      }
      const vectors = this.lanes.addQuery(texts);
      this.pump();
      return vectors;
    }
    return this.lanes.addIndex(texts, () => this.pump());
  }

  health(): EmbedderHealth {
    const health: EmbedderHealth = {
      workers: this.slots.length,
      ready_workers: this.readyCount(),
      restarts: this.restarts,
      queued_queries: this.lanes.queuedQueryTexts(),
      queued_index_texts: this.lanes.queuedIndexTextCount(),
      index_duty_cycle: this.dutyCycle,
      resting_workers: this.slots.filter((slot) => slot.restUntil !== undefined).length,
    };
    if (this.lastFailure) {
      health.last_failure = this.lastFailure.message;
      health.last_failure_at = this.lastFailure.at;
    }
    return health;
  }

  onEvent(listener: (event: EmbedderEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = new Error('embedding pool is closed');
    this.lanes.close(error);
    for (const waiter of this.readyWaiters.splice(0)) waiter.reject(error);
    await Promise.all(
      this.slots.map(async (slot) => {
        clearTimeout(slot.restartTimer);
        clearTimeout(slot.watchdog);
        clearTimeout(slot.restTimer);
        if (slot.batch) this.lanes.fail(slot.batch, error);
        const worker = slot.worker;
        slot.worker = undefined;
        slot.state = 'down';
        if (worker) await worker.terminate().catch(() => undefined);
      }),
    );
  }

  // ---- workers ------------------------------------------------------------------------------------

  private spawn(slot: Slot): void {
    if (this.closed) return;
    const data: EmbeddingWorkerData = { faults: this.options.faults ?? false, nice: this.options.nice ?? 0 };
    let worker: Worker;
    try {
      worker = new Worker(this.options.script ?? workerScript(), { workerData: data });
    } catch (error) {
      this.lost(slot, undefined, `embedding worker ${slot.index} could not start: ${errorMessage(error)}`);
      return;
    }
    slot.worker = worker;
    slot.state = 'starting';
    worker.on('message', (reply: WorkerReply) => this.onReply(slot, worker, reply));
    worker.on('error', (error) => this.lost(slot, worker, `embedding worker ${slot.index} failed: ${error.message}`));
    worker.on('exit', (code) => this.lost(slot, worker, `embedding worker ${slot.index} exited with code ${code}`));
  }

  private onReply(slot: Slot, worker: Worker, reply: WorkerReply): void {
    if (slot.worker !== worker) return;
    switch (reply.type) {
      case 'ready': {
        slot.state = 'idle';
        slot.failedStarts = 0;
        const afterFailure = slot.recovering;
        slot.recovering = false;
        if (afterFailure) this.log.info({ worker: slot.index }, 'embedding worker restarted and ready');
        for (const waiter of this.readyWaiters.splice(0)) waiter.resolve();
        this.emit({ kind: 'worker-ready', after_failure: afterFailure });
        this.pump();
        return;
      }
      case 'load-error':
        this.lost(slot, worker, `embedding worker ${slot.index} could not load the model: ${reply.message}`);
        return;
      case 'result': {
        const batch = this.finishBatch(slot, reply.id);
        if (batch?.kind === 'index') this.rest(slot);
        if (batch) this.lanes.deliver(batch, reply.vectors, reply.dimension);
        this.pump();
        return;
      }
      case 'error': {
        const batch = this.finishBatch(slot, reply.id);
        if (batch) {
          const message = `embedding worker ${slot.index} failed a batch: ${reply.message}`;
          this.recordFailure(message);
          this.log.warn({ worker: slot.index, err: reply.message }, 'embedding batch failed');
          this.lanes.fail(batch, new Error(message));
        }
        this.pump();
        return;
      }
    }
  }

  /** A worker is gone (exit, error, failed load, hung): fail its batch and start a replacement. */
  private lost(slot: Slot, worker: Worker | undefined, reason: string): void {
    if (this.closed || slot.worker !== worker) return;
    const wasStarting = slot.state === 'starting' || worker === undefined;
    slot.worker = undefined;
    slot.state = 'down';
    clearTimeout(slot.watchdog);
    if (worker) void worker.terminate().catch(() => undefined);
    this.restarts++;
    slot.recovering = true;
    slot.failedStarts = wasStarting ? slot.failedStarts + 1 : 0;
    this.recordFailure(reason);
    this.log.warn({ worker: slot.index, reason }, 'embedding worker lost; restarting it');
    const error = new Error(`${reason}; restarting it`);
    if (slot.batch) {
      const batch = slot.batch;
      slot.batch = undefined;
      this.lanes.fail(batch, error);
    }
    if (this.readyCount() === 0) {
      this.lanes.failQueries(error);
      if (wasStarting) for (const waiter of this.readyWaiters.splice(0)) waiter.reject(error);
    }
    this.emit({ kind: 'worker-lost', reason: error.message });
    const delay = Math.min(MAX_RESTART_DELAY_MS, 100 * 2 ** slot.failedStarts);
    slot.restartTimer = setTimeout(() => this.spawn(slot), delay);
  }

  // ---- batches ------------------------------------------------------------------------------------

  /** Hands the next batch to every idle worker: queries first, then one bounded indexing batch. */
  private pump(): void {
    const now = performance.now();
    for (const slot of this.slots) {
      if (slot.state !== 'idle' || !slot.worker) continue;
      const resting = slot.restUntil !== undefined && now < slot.restUntil;
      const batch = this.lanes.next(resting);
      if (!batch) {
        if (resting) continue;
        return;
      }
      slot.startedAt = now;
      const id = this.nextBatchId++;
      slot.batch = batch;
      slot.batchId = id;
      slot.state = 'busy';
      const timeoutMs = this.options.job_timeout_ms ?? 60_000;
      const worker = slot.worker;
      slot.watchdog = setTimeout(
        () => this.lost(slot, worker, `embedding worker ${slot.index} did not answer within ${Math.round(timeoutMs / 1000)} s`),
        timeoutMs,
      );
      const request: WorkerRequest = { type: 'embed', id, texts: batch.texts };
      worker.postMessage(request);
    }
  }

  /** After an indexing batch: the pause that keeps this worker's indexing within its duty cycle. */
  private rest(slot: Slot): void {
    const duty = this.dutyCycle;
    if (duty >= 1 || slot.startedAt === undefined) return;
    const busyMs = performance.now() - slot.startedAt;
    const restMs = (busyMs * (1 - duty)) / duty;
    slot.restUntil = performance.now() + restMs;
    clearTimeout(slot.restTimer);
    slot.restTimer = setTimeout(() => {
      slot.restUntil = undefined;
      this.pump();
    }, Math.ceil(restMs));
  }

  private finishBatch(slot: Slot, id: number): Batch | undefined {
    if (slot.batchId !== id || !slot.batch) return undefined;
    const batch = slot.batch;
    slot.batch = undefined;
    slot.batchId = undefined;
    slot.state = 'idle';
    clearTimeout(slot.watchdog);
    return batch;
  }

  // ---- helpers ------------------------------------------------------------------------------------

  private readyCount(): number {
    let n = 0;
    for (const slot of this.slots) if (slot.state === 'idle' || slot.state === 'busy') n++;
    return n;
  }

  private recordFailure(message: string): void {
    this.lastFailure = { message: message.slice(0, 500), at: Date.now() };
  }

  private emit(event: EmbedderEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (error) {
        this.log.error({ err: error }, 'embedding pool listener failed');
      }
    }
  }
}

/**
 * The compiled worker module. Next to this file when running from dist/; when this module runs from
 * TypeScript sources (tests), the build's copy in dist/ is used, since a worker thread loads plain JS.
 */
function workerScript(): string {
  const beside = fileURLToPath(new URL('./embedding-worker.js', import.meta.url));
  if (existsSync(beside)) return beside;
  const built = join(findPackageRoot(), 'dist', 'src', 'retrieval', 'embedding-worker.js');
  if (existsSync(built)) return built;
  throw new Error(`embedding worker script not found (${beside}); run npm run build`);
}

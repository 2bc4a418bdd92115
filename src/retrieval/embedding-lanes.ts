// The two lanes of the embedding pool, without the workers: queries (a user is waiting) always come
// first and the ones waiting together share one model call; indexing work is cut into bounded batches
// and the lane itself is bounded, so a producer waits for room (back-pressure) instead of queueing
// without limit. A batch that fails fails every caller it carries; an indexing job fails as a whole.

interface QueryJob {
  texts: string[];
  resolve: (vectors: number[][]) => void;
  reject: (error: Error) => void;
}

interface IndexJob {
  texts: string[];
  vectors: number[][];
  dispatched: number;
  done: number;
  failed: boolean;
  resolve: (vectors: number[][]) => void;
  reject: (error: Error) => void;
}

export type Batch = { kind: 'query'; jobs: QueryJob[]; texts: string[] } | { kind: 'index'; job: IndexJob; offset: number; texts: string[] };

export interface LaneLimits {
  /** Most query texts in one batch. */
  query_batch: number;
  /** Texts per indexing batch. */
  index_batch: number;
  /** Indexing texts that may wait before addIndex() waits for room. */
  max_queued_index_texts: number;
}

export class EmbeddingLanes {
  private readonly queries: QueryJob[] = [];
  private readonly indexJobs: IndexJob[] = [];
  private queuedIndexTexts = 0;
  private readonly roomWaiters: (() => void)[] = [];
  private closed: Error | undefined;

  constructor(private readonly limits: LaneLimits) {}

  addQuery(texts: string[]): Promise<number[][]> {
    if (this.closed) return Promise.reject(this.closed);
    return new Promise((resolve, reject) => this.queries.push({ texts, resolve, reject }));
  }

  /** Waits for room first when the lane is full; resolves with every vector once the last batch is back. */
  async addIndex(texts: string[], onQueued: () => void): Promise<number[][]> {
    while (this.queuedIndexTexts > 0 && this.queuedIndexTexts + texts.length > this.limits.max_queued_index_texts) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
      if (this.closed) throw this.closed;
    }
    if (this.closed) throw this.closed;
    const done = new Promise<number[][]>((resolve, reject) => {
      this.indexJobs.push({ texts, vectors: new Array<number[]>(texts.length), dispatched: 0, done: 0, failed: false, resolve, reject });
    });
    this.queuedIndexTexts += texts.length;
    onQueued();
    return done;
  }

  queuedQueryTexts(): number {
    return this.queries.reduce((n, job) => n + job.texts.length, 0);
  }

  queuedIndexTextCount(): number {
    return this.queuedIndexTexts;
  }

  /**
   * The next batch for an idle worker: waiting queries first, then one bounded slice of indexing
   * (unless `queriesOnly`: a worker resting between indexing batches still answers queries).
   */
  next(queriesOnly = false): Batch | undefined {
    if (this.queries.length > 0) {
      const jobs: QueryJob[] = [];
      const texts: string[] = [];
      while (this.queries.length > 0 && (jobs.length === 0 || texts.length + this.queries[0]!.texts.length <= this.limits.query_batch)) {
        const job = this.queries.shift()!;
        jobs.push(job);
        texts.push(...job.texts);
      }
      return { kind: 'query', jobs, texts };
    }
    if (queriesOnly) return undefined;
    const job = this.indexJobs[0];
    if (!job) return undefined;
    const offset = job.dispatched;
    const texts = job.texts.slice(offset, offset + this.limits.index_batch);
    job.dispatched += texts.length;
    if (job.dispatched >= job.texts.length) this.indexJobs.shift();
    this.consumeIndexTexts(texts.length);
    return { kind: 'index', job, offset, texts };
  }

  deliver(batch: Batch, flat: Float32Array, dimension: number): void {
    const vectorAt = (i: number): number[] => Array.from(flat.subarray(i * dimension, (i + 1) * dimension));
    if (batch.kind === 'query') {
      let i = 0;
      for (const job of batch.jobs) {
        const vectors: number[][] = [];
        for (let j = 0; j < job.texts.length; j++) vectors.push(vectorAt(i++));
        job.resolve(vectors);
      }
      return;
    }
    const { job, offset, texts } = batch;
    if (job.failed) return;
    for (let i = 0; i < texts.length; i++) job.vectors[offset + i] = vectorAt(i);
    job.done += texts.length;
    if (job.done === job.texts.length) job.resolve(job.vectors);
  }

  fail(batch: Batch, error: Error): void {
    if (batch.kind === 'query') {
      for (const job of batch.jobs) job.reject(error);
      return;
    }
    const { job } = batch;
    if (job.failed) return;
    job.failed = true;
    // The rest of this job will not be embedded either: its caller gets one error and retries the whole.
    const queuedAt = this.indexJobs.indexOf(job);
    if (queuedAt >= 0) {
      this.indexJobs.splice(queuedAt, 1);
      this.consumeIndexTexts(job.texts.length - job.dispatched);
    }
    job.reject(error);
  }

  /** Fails the waiting queries (nobody should wait for a worker that is restarting). */
  failQueries(error: Error): void {
    for (const job of this.queries.splice(0)) job.reject(error);
  }

  close(error: Error): void {
    this.closed = error;
    this.failQueries(error);
    for (const job of this.indexJobs.splice(0)) job.reject(error);
    this.queuedIndexTexts = 0;
    for (const wake of this.roomWaiters.splice(0)) wake();
  }

  private consumeIndexTexts(count: number): void {
    this.queuedIndexTexts -= count;
    for (const wake of this.roomWaiters.splice(0)) wake();
  }
}

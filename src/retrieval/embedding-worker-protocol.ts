// The messages between the embedding pool (Core thread) and its worker threads, and the test-only
// fault markers (active only when the pool is created with faults enabled).

/** A text equal to this makes a worker with faults enabled exit with FAULT_EXIT_CODE. */
export const FAULT_EXIT = '__homeclaw_test_worker_exit__';
/** A text equal to this makes a worker with faults enabled fail the batch (the worker stays up). */
export const FAULT_THROW = '__homeclaw_test_worker_throw__';
export const FAULT_EXIT_CODE = 70;

export interface EmbeddingWorkerData {
  faults: boolean;
  /** The worker thread's nice value (Linux, per thread; 0 = unchanged): the event loop thread wins the CPU. */
  nice: number;
}

export type WorkerRequest = { type: 'embed'; id: number; texts: string[] };

export type WorkerReply =
  | { type: 'ready'; dimension: number }
  | { type: 'load-error'; message: string }
  | { type: 'result'; id: number; dimension: number; vectors: Float32Array }
  | { type: 'error'; id: number; message: string };

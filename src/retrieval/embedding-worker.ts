// The body of one embedding worker thread: loads the offline sentence encoder once and answers
// {type:'embed', id, texts} with every vector of the batch in one transferred Float32Array, so the
// Core's event loop never runs the model and never copies vectors element by element.
//
// Test-only fault injection: with workerData.faults set (the pool sets it only when the environment
// variable HOMECLAW_TEST_EMBEDDER_FAULTS=1), a text equal to FAULT_EXIT makes the worker exit and
// FAULT_THROW makes this batch fail, so tests can kill or break a real worker on demand.
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { FAULT_EXIT, FAULT_EXIT_CODE, FAULT_THROW, type EmbeddingWorkerData, type WorkerReply, type WorkerRequest } from './embedding-worker-protocol.js';
import { UseLiteEmbedder } from './use-lite-embedder.js';
import { errorMessage } from '../kit/error-message.js';

const port = parentPort;
if (port) {
  const data = workerData as EmbeddingWorkerData;
  if (data.nice > 0) {
    try {
      // On Linux, pid 0 names the calling thread only; elsewhere it would slow the whole Core, so it is skipped.
      if (process.platform === 'linux') setPriority(0, data.nice);
    } catch {
      // Not permitted: run at normal priority.
    }
  }
  const embedder = new UseLiteEmbedder();
  const post = (reply: WorkerReply, transfer: ArrayBuffer[] = []): void => port.postMessage(reply, transfer);

  embedder
    .embed(['warm up'])
    .then(() => post({ type: 'ready', dimension: embedder.dimension() }))
    .catch((error: unknown) => post({ type: 'load-error', message: errorMessage(error) }));

  port.on('message', (request: WorkerRequest) => {
    void handle(request);
  });

  async function handle(request: WorkerRequest): Promise<void> {
    try {
      if (data.faults && request.texts.includes(FAULT_EXIT)) process.exit(FAULT_EXIT_CODE);
      if (data.faults && request.texts.includes(FAULT_THROW)) throw new Error('test fault: the embedding worker threw');
      const vectors = await embedder.embed(request.texts);
      const dimension = embedder.dimension();
      const flat = new Float32Array(vectors.length * dimension);
      vectors.forEach((vector, i) => {
        flat.set(vector, i * dimension);
      });
      post({ type: 'result', id: request.id, dimension, vectors: flat }, [flat.buffer]);
    } catch (error) {
      post({ type: 'error', id: request.id, message: errorMessage(error) });
    }
  }
}

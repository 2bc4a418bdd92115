// A real Chroma server for tests: its own free port and temp data dir; restartable on the same port and
// data (to test outages and recovery); stop() kills it and removes the dir.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/log.js';
import { ChromaProcess } from '../../src/retrieval/chroma-process.js';

export interface TestChroma {
  url: string;
  dataDir: string;
  /** Stops the server but keeps its data (simulates an outage). */
  pause(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  resume(): Promise<void>;
  /** Stops the server and deletes its data. */
  stop(): Promise<void>;
}

export async function startChroma(): Promise<TestChroma> {
  const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-chroma-'));
  const process = new ChromaProcess({ dataDir, port: 0, log: silentLogger(), startTimeoutMs: 60_000 });
  const url = await process.start();
  return {
    url,
    dataDir,
    pause: () => process.stop(),
    resume: async () => {
      await process.start();
    },
    stop: async () => {
      await process.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

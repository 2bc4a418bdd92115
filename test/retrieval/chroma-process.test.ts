// The embedded Chroma server: started by retrieval in <data_dir>/chroma, stopped with it, and never
// left behind when its parent dies.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { CHROMA_CHILD_MAIN, chromaCliPath, chromaHeartbeat, freePort } from '../../src/retrieval/chroma-process.js';
import { createRetrieval } from '../../src/retrieval/retrieval.js';
import type { Embedder } from '../../src/retrieval/embedder.js';
import { normalise } from '../../src/retrieval/embedder.js';
import { HOME_PLUGINS, newRegistry, retrievalConfig } from './fixtures.js';

/** A cheap deterministic embedder: this file tests processes, not semantics. */
const letters: Embedder = {
  name: 'letters-26',
  dimension: () => 26,
  embed: async (texts) =>
    texts.map((t) => {
      const v = new Array<number>(26).fill(0.01);
      for (const c of t.toLowerCase()) if (c >= 'a' && c <= 'z') v[c.charCodeAt(0) - 97]! += 1;
      return normalise(v);
    }),
};

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('embedded Chroma', () => {
  it('starts chroma run in <data_dir>/chroma, indexes, and stops it with retrieval', async () => {
    const saved = process.env.HOMECLAW_CHROMA_URL;
    delete process.env.HOMECLAW_CHROMA_URL;
    const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-embedded-'));
    dirs.push(dataDir);
    const registry = newRegistry();
    for (const descriptor of HOME_PLUGINS) registry.register({ descriptor, owner: 'api' });
    const retrieval = await createRetrieval({
      config: {
        ...retrievalConfig({ collection: 'homeclaw_plugins', url: '', data_dir: dataDir }),
        chroma: { url: null, port: 0, collection: 'homeclaw_plugins' },
      },
      registry,
      log: silentLogger(),
      embedder: letters,
    });
    try {
      await retrieval.start();
      const status = retrieval.status();
      expect(status.state).toBe('ok');
      expect(status.chroma_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await chromaHeartbeat(status.chroma_url!)).toBe(true);
      expect(existsSync(join(dataDir, 'chroma', 'chroma.sqlite3'))).toBe(true);
      expect((await retrieval.search('music', { k: 1 })).mode).toBe('hybrid');
      await retrieval.stop();
      expect(await chromaHeartbeat(status.chroma_url!, 500)).toBe(false);
    } finally {
      await retrieval.stop();
      if (saved !== undefined) process.env.HOMECLAW_CHROMA_URL = saved;
    }
  });

  it('leaves no orphan when the parent process is killed with SIGKILL', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-orphan-'));
    dirs.push(dataDir);
    const port = await freePort();
    // A stand-in Core: spawns the Chroma child exactly as ChromaProcess does, prints its pid, then idles.
    const parentCode = `
      const { spawn } = await import('node:child_process');
      const child = spawn(process.execPath, ['--input-type=module', '-e', process.env.CHILD_MAIN, process.env.CLI, 'run', '--path', process.env.DIR, '--port', process.env.PORT, '--host', '127.0.0.1'], { stdio: ['pipe', 'ignore', 'ignore'] });
      console.log(child.pid);
      setInterval(() => {}, 1000);
    `;
    const parent = spawn(process.execPath, ['--input-type=module', '-e', parentCode], {
      env: { ...process.env, CHILD_MAIN: CHROMA_CHILD_MAIN, CLI: chromaCliPath(), DIR: dataDir, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const childPid = await new Promise<number>((resolve) => parent.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))));
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 30_000;
    while (!(await chromaHeartbeat(url, 500)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 150));
    expect(await chromaHeartbeat(url)).toBe(true);

    parent.kill('SIGKILL');
    const gone = Date.now() + 10_000;
    while (isAlive(childPid) && Date.now() < gone) await new Promise((r) => setTimeout(r, 100));
    const alive = isAlive(childPid);
    if (alive) process.kill(childPid, 'SIGKILL');
    expect(alive).toBe(false);
    expect(await chromaHeartbeat(url, 500)).toBe(false);
  });
});

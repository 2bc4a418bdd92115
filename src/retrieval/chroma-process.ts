// Runs a local Chroma server (`chroma run` from the chromadb npm package) as a child process.
//
// The chromadb CLI hands control to a native binding that blocks the JS thread for the server's whole
// life, so the child runs the CLI in a worker thread and keeps its main thread free to watch the parent:
// when our stdin pipe closes (the Core exited, even by SIGKILL) or the parent pid disappears, it kills
// itself. That is how no Chroma server outlives the Core.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import type { Logger } from '../log.js';

/** The child process main: exported so a test can prove a SIGKILLed parent leaves no orphan. */
export const CHROMA_CHILD_MAIN = `
import { Worker } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';
const [cli, ...args] = process.argv.slice(1);
const parent = process.ppid;
const die = () => process.kill(process.pid, 'SIGKILL');
process.stdin.on('end', die);
process.stdin.on('error', die);
process.stdin.resume();
setInterval(() => { try { process.kill(parent, 0); } catch { die(); } if (process.ppid !== parent) die(); }, 1000);
const worker = new Worker(pathToFileURL(cli), { argv: args, execArgv: [] });
worker.on('error', (err) => { console.error(String((err && err.stack) || err)); process.exit(70); });
worker.on('exit', (code) => process.exit(code || 0));
`;

export interface ChromaProcessOptions {
  dataDir: string;
  /** 0 picks a free port. */
  port: number;
  log: Logger;
  startTimeoutMs?: number;
}

export function chromaCliPath(): string {
  const require = createRequire(import.meta.url);
  // The package exports only its client entry; the CLI sits next to it in dist/.
  const clientEntry = require.resolve('chromadb'); // .../dist/cjs/chromadb.cjs
  return join(dirname(dirname(clientEntry)), 'cli.mjs');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function chromaHeartbeat(url: string, timeoutMs = 2_000): Promise<boolean> {
  try {
    const response = await fetch(`${url}/api/v2/heartbeat`, { signal: AbortSignal.timeout(timeoutMs) });
    return response.ok;
  } catch {
    return false;
  }
}

export class ChromaProcess {
  private child: ChildProcess | undefined;
  private port = 0;
  private stderrTail = '';
  private readonly onCoreExit = (): void => {
    this.child?.kill('SIGKILL');
  };

  constructor(private readonly options: ChromaProcessOptions) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the server (reusing the same port on restarts) and resolves once its heartbeat answers. */
  async start(): Promise<string> {
    if (this.running) return this.url;
    if (this.port === 0) this.port = this.options.port || (await freePort());
    const chromaDir = this.options.dataDir;
    mkdirSync(chromaDir, { recursive: true, mode: 0o700 });
    this.stderrTail = '';
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', CHROMA_CHILD_MAIN, chromaCliPath(), 'run', '--path', chromaDir, '--port', String(this.port), '--host', '127.0.0.1'],
      { stdio: ['pipe', 'ignore', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
    );
    this.child = child;
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-4_000);
    });
    child.stdin?.on('error', () => undefined);
    child.on('exit', (code, signal) => {
      this.options.log.info({ code, signal, port: this.port }, 'chroma server exited');
    });
    process.once('exit', this.onCoreExit);

    const deadline = Date.now() + (this.options.startTimeoutMs ?? 30_000);
    while (Date.now() < deadline) {
      if (!this.running) {
        throw new Error(`chroma run exited early (code ${child.exitCode}, signal ${child.signalCode}): ${this.stderrTail.trim().slice(-800)}`);
      }
      if (await chromaHeartbeat(this.url, 1_000)) {
        this.options.log.info({ url: this.url, dir: chromaDir }, 'chroma server ready');
        return this.url;
      }
      await new Promise((r) => setTimeout(r, 150));
    }
    await this.stop();
    throw new Error(`chroma run did not answer its heartbeat within ${this.options.startTimeoutMs ?? 30_000} ms: ${this.stderrTail.trim().slice(-800)}`);
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    process.removeListener('exit', this.onCoreExit);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(timer);
  }
}

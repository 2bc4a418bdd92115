// `homeclaw start` as a real child process (built CLI from dist/), for tests that need the Core in its
// own process: its environment, its restart, its timing under load. Also the CLI and the HTTP API
// against it.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..', '..');
export const CLI = join(root, 'dist', 'src', 'cli.js');

export interface CoreProcess {
  child: ChildProcess;
  /** Everything the Core wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM (SIGKILL after 10 s); resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `homeclaw start` with this environment (on top of the test's own) and these Node options; resolves once it is listening. */
export function startCoreProcess(
  env: NodeJS.ProcessEnv,
  options: { replaceEnv?: boolean; timeoutMs?: number; nodeArgs?: string[] } = {},
): Promise<CoreProcess> {
  return new Promise((resolvePromise, reject) => {
    const childEnv = options.replaceEnv ? env : { ...process.env, ...env };
    const child = spawn(process.execPath, [...(options.nodeArgs ?? []), CLI, 'start'], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let ready = false;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`homeclaw start did not come up:\n${output}`));
    }, options.timeoutMs ?? 60_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (!ready && output.includes('HomeClaw Core running')) {
        ready = true;
        clearTimeout(timer);
        resolvePromise({ child, output: () => output, stop: () => stopProcess(child) });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`homeclaw start exited with ${code}:\n${output}`));
    });
  });
}

export function stopProcess(child: ChildProcess): Promise<number | null> {
  return new Promise((resolveExit) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolveExit(child.exitCode);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolveExit(code);
    });
    child.kill('SIGTERM');
  });
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the `homeclaw` CLI with this environment; never throws. */
export async function homeclaw(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** fetch against a Core's HTTP API with a bearer token; the body parsed as JSON when there is one. */
export async function api<T = Record<string, unknown>>(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: (text ? JSON.parse(text) : {}) as T };
}

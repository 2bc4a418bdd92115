// `homeclaw start` as a real process: readable lines with --log-format pretty (or on a terminal, here a
// pseudo-terminal from util-linux `script`), JSON lines when the log is piped, and the forced formats
// winning over what the terminal suggests.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { coreProcessEnv } from '../helpers/core-process-env.js';
import { ensureBuilt, REPO_ROOT, SHIPPED_PLUGINS_DIR } from './helpers.js';

const CLI = join(REPO_ROOT, 'dist', 'src', 'cli.js');
const SCRIPT = '/usr/bin/script';
const PRETTY_LINE = /^\[\d\d:\d\d:\d\d\.\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL): /;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour codes start with ESC.
const ANSI = /\u001b\[[0-9;]*m/g;

interface Running {
  child: ChildProcess;
  output: () => string;
  /** The Core's own pid (under `script` the child is script itself). */
  corePid: () => number;
  env: NodeJS.ProcessEnv;
}

const running: Running[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const run of running.splice(0)) await stop(run);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function startCoreProcess(args: string[], extraEnv: NodeJS.ProcessEnv, terminal: boolean): Promise<Running> {
  await ensureBuilt();
  const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-log-format-'));
  dirs.push(dataDir);
  const env: NodeJS.ProcessEnv = { ...process.env, ...(await coreProcessEnv(dataDir, SHIPPED_PLUGINS_DIR)), HOMECLAW_LOG_LEVEL: 'info' };
  // The developer's own shell setting must not decide what the test sees.
  delete env.HOMECLAW_LOG_FORMAT;
  Object.assign(env, extraEnv);
  const command = [process.execPath, CLI, 'start', ...args].map((part) => `'${part}'`).join(' ');
  // Under script the shell prints its pid and then becomes the Core (exec), so the test can stop it by pid.
  const child = terminal
    ? spawn(SCRIPT, ['-qfec', `echo "PID $$"; exec ${command}`, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(process.execPath, [CLI, 'start', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const run: Running = {
    child,
    output: () => output.replace(/\r/g, ''),
    corePid: () => (terminal ? Number(/PID (\d+)/.exec(output)?.[1]) : (child.pid as number)),
    env,
  };
  running.push(run);
  const deadline = Date.now() + 60_000;
  while (!run.output().includes('HomeClaw Core running')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the Core did not start:\n${run.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return run;
}

function stop(run: Running): Promise<void> {
  return new Promise((resolve) => {
    if (run.child.exitCode !== null || run.child.signalCode !== null) return resolve();
    run.child.once('exit', () => resolve());
    const pid = run.corePid();
    if (Number.isInteger(pid) && pid > 0) process.kill(pid, 'SIGTERM');
    setTimeout(() => run.child.kill('SIGKILL'), 10_000).unref();
  });
}

/** The log lines: everything but the CLI's own status line and the pid line of the terminal wrapper. */
function logLines(run: Running): string[] {
  return run
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('HomeClaw Core running') && !/^PID \d+$/.test(line));
}

function expectPretty(lines: string[]): void {
  expect(lines.length).toBeGreaterThan(5);
  for (const line of lines) expect(line.replace(ANSI, '')).toMatch(PRETTY_LINE);
  expect(lines.some((line) => line.replace(ANSI, '').includes('INFO: [adapters] Loaded built-in plugin time 1.0.0'))).toBe(true);
}

function expectJson(lines: string[]): void {
  expect(lines.length).toBeGreaterThan(5);
  for (const line of lines) expect(JSON.parse(line)).toMatchObject({ level: expect.any(Number), time: expect.any(Number), msg: expect.any(String) });
}

describe('homeclaw start log format', () => {
  it('--log-format pretty prints one readable line per event even into a pipe, without colours or secrets', async () => {
    const run = await startCoreProcess(['--log-format', 'pretty'], {}, false);
    // A refused request is logged; the bearer it carried must not be.
    await fetch(`${run.env.HOMECLAW_URL}/api/plugins`, { headers: { authorization: 'Bearer not-the-token-5ecret' } });
    const deadline = Date.now() + 10_000;
    while (!run.output().includes('refused') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expectPretty(logLines(run));
    expect(run.output()).toMatch(/WARN: HTTP request without a valid bearer token refused/);
    expect(run.output()).not.toContain('5ecret');
    expect(run.output()).not.toMatch(ANSI);
  });

  it('piped output is JSON lines by default, and HOMECLAW_LOG_FORMAT=pretty switches it', async () => {
    expectJson(logLines(await startCoreProcess([], {}, false)));
    expectPretty(logLines(await startCoreProcess([], { HOMECLAW_LOG_FORMAT: 'pretty' }, false)));
  });

  it.skipIf(!existsSync(SCRIPT))('on a terminal the default is readable, coloured lines; --log-format json and NO_COLOR are obeyed', async () => {
    const pretty = await startCoreProcess([], { NO_COLOR: '' }, true);
    expect(pretty.output()).toMatch(ANSI);
    expectPretty(logLines(pretty));
    const plain = await startCoreProcess([], { NO_COLOR: '1' }, true);
    expectPretty(logLines(plain));
    expect(plain.output()).not.toMatch(ANSI);
    expectJson(logLines(await startCoreProcess(['--log-format', 'json'], {}, true)));
  });
});

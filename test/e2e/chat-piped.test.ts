// `homeclaw chat` fed by a pipe against a real `homeclaw start` process: the whole script is written and
// stdin closed at once; every line is answered in order (the buy confirmation included), nothing but
// the replies reaches stdout, and the command exits after the last answer. On a terminal (a
// pseudo-terminal from util-linux `script`) each answer is followed by exactly one prompt.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOrders } from '../../plugins/buy/index.js';
import { coreProcessEnv } from '../helpers/core-process-env.js';
import { ensureBuilt, REPO_ROOT, SHIPPED_PLUGINS_DIR } from './helpers.js';

const run = promisify(execFile);
const CLI = join(REPO_ROOT, 'dist', 'src', 'cli.js');
const SCRIPT = '/usr/bin/script';
let dataDir: string;
let env: NodeJS.ProcessEnv;
let core: ChildProcess;

interface Finished {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `homeclaw <args>` with `input` already in its closed stdin. */
function homeclawPiped(args: string[], input: string, timeoutMs = 30_000): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`homeclaw ${args.join(' ')} did not exit within ${timeoutMs} ms; stdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

beforeAll(async () => {
  await ensureBuilt();
  dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-chat-piped-'));
  env = await coreProcessEnv(dataDir, SHIPPED_PLUGINS_DIR);
  core = spawn(process.execPath, [CLI, 'start'], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the Core did not start:\n${output}`)), 60_000);
    core.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('HomeClaw Core running')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  await run(process.execPath, [CLI, 'profile', 'set', 'alice', 'name=Alice', 'address=12 Oak St', 'phone=555-0100'], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...env },
  });
}, 120_000);

afterAll(async () => {
  if (core && core.exitCode === null) {
    await new Promise<void>((resolve) => {
      core.once('exit', () => resolve());
      core.kill('SIGTERM');
    });
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('homeclaw chat with piped input', () => {
  it('answers every line in order, the confirmation included, then exits 0', async () => {
    const result = await homeclawPiped(['chat', '--user', 'alice'], 'what time is it?\nbuy me some milk\nyes\n');
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^homeclaw> It is \w+day, \d+ \w+ \d{4}, \d\d:\d\d in /);
    expect(lines[1]).toMatch(/^homeclaw \(question\)> I have your address as "12 Oak St" and phone as "555-0100"/);
    expect(lines[2]).toMatch(/^homeclaw> Order placed for milk: delivery to 12 Oak St for Alice/);
    expect(lines[3]).toBe('');
    expect(result.stdout).not.toContain('you>');
    expect(result.stderr).toContain('Connected to');
    expect(listOrders(join(dataDir, 'plugins', 'buy'))).toEqual([expect.objectContaining({ item: 'milk', user_id: 'alice' })]);
  }, 60_000);

  it('--json prints one channel reply per line, questions included', async () => {
    const result = await homeclawPiped(['chat', '--user', 'alice', '--json'], '/help\nbuy me some bread\nyes\n');
    expect(result.code).toBe(0);
    const replies = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(replies.map((r) => r['kind'])).toEqual(['answer', 'question', 'answer']);
    expect(replies[2]).toMatchObject({
      user_id: 'alice',
      plugin_id: 'buy',
      capability_id: 'place_order',
      text: expect.stringContaining('Order placed for bread'),
    });
    expect(new Set(replies.map((r) => r['request_id'])).size).toBe(3);
  }, 60_000);

  it.skipIf(!existsSync(SCRIPT))(
    'on a terminal: one prompt after each answer, never doubled',
    async () => {
      const chat = spawn(SCRIPT, ['-qfec', `'${process.execPath}' '${CLI}' chat --user alice`, '/dev/null'], {
        cwd: REPO_ROOT,
        env: { ...process.env, ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let output = '';
      chat.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const waitFor = async (pattern: RegExp): Promise<void> => {
        const deadline = Date.now() + 20_000;
        while (!pattern.test(output)) {
          if (Date.now() > deadline) throw new Error(`${String(pattern)} not seen; output:\n${output}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      await waitFor(/you> /);
      chat.stdin.write('what time is it?\n');
      await waitFor(/homeclaw> It is [^\n]*\n[\s\S]*you> /);
      chat.stdin.write('/plugins\n');
      // The plugin list names weather; nothing typed so far does.
      await waitFor(/weather[\s\S]*you> /);
      chat.stdin.write('/quit\n');
      await new Promise<void>((resolve) => (chat.exitCode !== null ? resolve() : chat.once('exit', () => resolve())));
      // The first prompt, then one after each of the two answers.
      expect(output.match(/you> /g)).toHaveLength(3);
      expect(chat.exitCode).toBe(0);
    },
    60_000,
  );
});

// A newcomer's first conversation: a newcomer starts the Core (`homeclaw start`, a real child process, no LLM), opens
// `homeclaw chat`, asks for the time and buys milk through the confirmation dialogue after
// `homeclaw profile set`; `homeclaw send "<text>"` answers one message. Asserts what the user sees.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOrders } from '../../plugins/buy/index.js';
import { coreProcessEnv } from '../helpers/core-process-env.js';
import { ensureBuilt, REPO_ROOT, SHIPPED_PLUGINS_DIR } from './helpers.js';

const run = promisify(execFile);
const CLI = join(REPO_ROOT, 'dist', 'src', 'cli.js');
const children = new Set<ChildProcess>();
let dataDir: string;
let env: NodeJS.ProcessEnv;
let core: ChildProcess;

function spawnCli(args: string[]): { child: ChildProcess; output: () => string; waitFor: (text: string | RegExp, timeoutMs?: number) => Promise<string> } {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let output = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer): void => {
    output += chunk.toString();
    for (const listener of [...listeners]) listener();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  return {
    child,
    output: () => output,
    waitFor(text, timeoutMs = 15_000) {
      const found = (): boolean => (typeof text === 'string' ? output.includes(text) : text.test(output));
      if (found()) return Promise.resolve(output);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`"${String(text)}" not seen within ${timeoutMs} ms; output so far:\n${output}`));
        }, timeoutMs);
        const check = (): void => {
          if (!found()) return;
          clearTimeout(timer);
          listeners.delete(check);
          resolve(output);
        };
        listeners.add(check);
      });
    },
  };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
}

async function homeclaw(args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env }, timeout: 30_000 });
  return stdout;
}

beforeAll(async () => {
  await ensureBuilt();
  dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-newcomer-chat-'));
  env = await coreProcessEnv(dataDir, SHIPPED_PLUGINS_DIR);
  const started = spawnCli(['start']);
  core = started.child;
  await started.waitFor('HomeClaw Core running', 60_000);
}, 120_000);

afterAll(async () => {
  for (const child of [...children]) await stop(child);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('newcomer: homeclaw start + homeclaw chat, no LLM', () => {
  it('asks for the time and buys milk through the confirmation dialogue', async () => {
    const profile = await homeclaw(['profile', 'set', 'alice', 'name=Alice', 'address=12 Oak St', 'phone=555-0100']);
    expect(profile).toContain('address: 12 Oak St');

    const chat = spawnCli(['chat', '--user', 'alice', '--timeout', '15']);
    const say = async (text: string, expected: string | RegExp): Promise<string> => {
      const before = chat.output().length;
      chat.child.stdin!.write(`${text}\n`);
      await chat.waitFor(expected);
      return chat.output().slice(before);
    };
    await chat.waitFor(/connected|chat|>/i);
    const time = await say('what time is it?', /homeclaw> It is .* \(UTC[+-]\d\d:\d\d\)\./);
    expect(time).toMatch(/homeclaw> It is \w+day, \d+ \w+ \d{4}, \d\d:\d\d in /);

    const question = await say('buy me some milk', 'Is that correct?');
    expect(question).toContain('homeclaw (question)> ');
    expect(question).toContain('"12 Oak St"');
    expect(question).toContain('"555-0100"');
    expect(listOrders(join(dataDir, 'plugins', 'buy'))).toHaveLength(0);

    const done = await say('yes', 'Order placed for milk');
    expect(done).toMatch(/homeclaw> Order placed for milk: delivery to 12 Oak St for Alice \(phone 555-0100\)/);
    expect(listOrders(join(dataDir, 'plugins', 'buy'))).toEqual([expect.objectContaining({ item: 'milk', user_id: 'alice', channel: 'cli' })]);

    chat.child.stdin!.end();
    await new Promise<void>((resolve) => (chat.child.exitCode !== null ? resolve() : chat.child.once('exit', () => resolve())));
    expect(chat.child.exitCode).toBe(0);
  }, 60_000);

  it('homeclaw send answers one message, and a slash command works', async () => {
    expect(await homeclaw(['send', '--user', 'bob', 'what time is it?'])).toMatch(/^homeclaw> It is /m);
    expect(await homeclaw(['send', '--user', 'bob', '/time now timezone=Asia/Tokyo'])).toContain('in Asia/Tokyo (UTC+09:00)');
  }, 30_000);

  it('the Core is still running and stops cleanly on SIGTERM', async () => {
    expect(core.exitCode).toBeNull();
    await stop(core);
    expect(core.signalCode === 'SIGTERM' || core.exitCode === 0).toBe(true);
  }, 20_000);
});

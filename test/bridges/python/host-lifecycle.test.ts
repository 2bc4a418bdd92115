// The Python host as a managed process: crashes restart with backoff (stale with the reason meanwhile,
// in-flight calls failed at once), a hung call times out while the host keeps serving and is then replaced,
// max_concurrency is honoured, stop ends the whole process tree, and the child sees no Core secrets.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { HOST_SCRIPT } from '../../../src/bridges/python/host-process.js';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive, waitFor } from '../../adapters/helpers.js';
import { FIXTURES, logged, startHarness, type Harness } from './harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

function environOf(pid: number): Record<string, string> {
  const raw = readFileSync(`/proc/${pid}/environ`, 'utf8');
  return Object.fromEntries(
    raw
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

describe('Python host lifecycle', () => {
  it('fails in-flight calls at once when the host crashes, is stale with the reason, and restarts with backoff', async () => {
    harness = await startHarness({ folders: ['unstable'], settings: { restart_backoff: { initial_ms: 300, max_ms: 5000 } } });
    const first = harness.bridge.adapter.pidsOf('unstable')[0]!;
    const states: string[] = [];
    harness.registry.events.on('plugin.health', ({ record }) => void states.push(`${record.state}: ${record.state_reason ?? ''}`));

    // A call in flight when another one kills the host fails with the exit, long before its deadline.
    const napping = harness.invoke('unstable', 'nap', { seconds: 30 }, 60);
    const crash = await harness.invoke('unstable', 'crash');
    expect(crash).toMatchObject({ success: false, error_code: 'plugin_error' });
    expect(crash.error).toContain('exited (code 7)');
    const nap = await napping;
    expect(nap).toMatchObject({ success: false });
    expect(nap.error).toContain('exited (code 7)');

    expect(harness.registry.get('unstable')).toMatchObject({ state: 'stale' });
    expect(harness.registry.get('unstable')?.state_reason).toContain('crashed: the Python host exited (code 7)');
    // While it restarts, calls are refused at once with the reason.
    expect(await harness.invoke('unstable', 'ok')).toMatchObject({ success: false, error_code: 'stale' });

    await waitFor(() => harness!.registry.get('unstable')?.state === 'online', 10_000);
    const second = harness.bridge.adapter.pidsOf('unstable')[0]!;
    expect(second).not.toBe(first);
    expect(await harness.invoke('unstable', 'ok')).toMatchObject({ success: true, data: { pid: second } });

    // A second crash in a row waits twice as long before the restart.
    await harness.invoke('unstable', 'crash');
    await waitFor(() => harness!.registry.get('unstable')?.state === 'online', 10_000);
    const delays = logged(harness, 'restarting python plugin unstable in').map((e) => e.delay_ms);
    expect(delays).toEqual([300, 600]);
    expect(states.filter((s) => s.startsWith('stale')).length).toBe(2);
    expect(states.filter((s) => s.startsWith('online')).length).toBe(2);
  });

  it('lets a call running in the old host finish when the plugin is reloaded', async () => {
    harness = await startHarness({ folders: ['unstable'] });
    const old = harness.bridge.adapter.pidsOf('unstable')[0]!;
    const napping = harness.invoke('unstable', 'nap', { seconds: 3 });
    await new Promise((r) => setTimeout(r, 300));
    const file = join(harness.pluginsDir, 'unstable', 'plugin.py');
    writeFileSync(file, readFileSync(file, 'utf8').replace('return {"text": "ok"', 'return {"text": "ok again"'));
    await harness.loader.reload(join(harness.pluginsDir, 'unstable'));
    // New calls go to the new host at once, while the old one finishes the nap instead of being killed.
    expect(await harness.invoke('unstable', 'ok')).toMatchObject({ text: 'ok again' });
    expect(harness.bridge.adapter.pidsOf('unstable')[0]).not.toBe(old);
    expect(await napping).toMatchObject({ success: true, text: 'rested' });
    await waitFor(() => !isAlive(old), 5000);
  });

  it('turns an exception into an error result and keeps serving', async () => {
    harness = await startHarness({ folders: ['unstable'] });
    const pid = harness.bridge.adapter.pidsOf('unstable')[0];
    const failed = await harness.invoke('unstable', 'fail');
    expect(failed).toMatchObject({
      success: false,
      error_code: 'plugin_error',
      error: 'python plugin unstable failed in fail: ValueError: the plugin refused: bad input',
    });
    // The traceback is logged for the developer.
    expect(logged(harness, 'python plugin unstable raised ValueError')[0]?.traceback).toContain('raise ValueError');
    expect(await harness.invoke('unstable', 'ok')).toMatchObject({ success: true, data: { pid } });
  });

  it('times out a hung call, serves other calls meanwhile, then replaces the wedged host', async () => {
    harness = await startHarness({ folders: ['unstable'], settings: { hang_grace_ms: 1000 } });
    const original = harness.bridge.adapter.pidsOf('unstable')[0]!;
    const hung = harness.invoke('unstable', 'hang', {}, 1);
    // While one call hangs, the same host answers another one.
    expect(await harness.invoke('unstable', 'ok')).toMatchObject({ success: true, data: { pid: original } });
    expect(await hung).toMatchObject({ success: false, error_code: 'timeout' });
    // The hung thread cannot be interrupted: a fresh host takes over and the old one is ended.
    await waitFor(() => !isAlive(original) && !harness!.bridge.adapter.pidsOf('unstable').includes(original), 10_000);
    const replacement = harness.bridge.adapter.pidsOf('unstable')[0]!;
    expect(replacement).not.toBe(original);
    expect(await harness.invoke('unstable', 'ok')).toMatchObject({ success: true, data: { pid: replacement } });
    expect(harness.registry.get('unstable')?.state).toBe('online');
    expect(logged(harness, 'replacing the Python host')).toHaveLength(1);

    // A coroutine is cancelled at its deadline inside the host: no replacement needed.
    expect(await harness.invoke('unstable', 'nap', { seconds: 30 }, 1)).toMatchObject({ success: false, error_code: 'timeout' });
    await new Promise((r) => setTimeout(r, 1500));
    expect(harness.bridge.adapter.pidsOf('unstable')).toEqual([replacement]);

    // The host enforces the deadline itself too: straight to the adapter, with a signal that never fires.
    const record = harness.registry.get('unstable')!;
    const nap = record.descriptor.capabilities.find((c) => c.id === 'nap')!;
    const direct = await harness.bridge.adapter.invoke({
      record,
      capability: nap,
      request: { request_id: 'direct-1', plugin_id: 'unstable', capability_id: 'nap', parameters: { seconds: 30 }, deadline: Date.now() + 500 },
      signal: new AbortController().signal,
    });
    expect(direct).toMatchObject({ success: false, error_code: 'timeout', error: 'python plugin unstable did not finish nap before its deadline' });
  });

  it('runs calls concurrently up to config.max_concurrency', async () => {
    harness = await startHarness({ folders: ['unstable'] });
    // rendezvous() returns only when two calls are inside the plugin at the same time (max_concurrency 4).
    const both = await Promise.all([harness.invoke('unstable', 'rendezvous'), harness.invoke('unstable', 'rendezvous')]);
    expect(both.map((r) => r.text)).toEqual(['met', 'met']);

    // With max_concurrency 1 the second call waits in the Core's queue, so the first one never meets it.
    const manifest = join(harness.pluginsDir, 'unstable', 'plugin.yaml');
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('max_concurrency: 4', 'max_concurrency: 1'));
    await harness.loader.reload(join(harness.pluginsDir, 'unstable'));
    expect(harness.registry.get('unstable')?.descriptor.config.max_concurrency).toBe(1);
    const serial = await Promise.all([harness.invoke('unstable', 'rendezvous'), harness.invoke('unstable', 'rendezvous')]);
    expect(serial[0]).toMatchObject({ success: false, error: expect.stringContaining('BrokenBarrierError') });
  });

  it('ends the host and every process it started, even one in its own session, when stopped', async () => {
    harness = await startHarness({ folders: ['unstable'] });
    const host = harness.bridge.adapter.pidsOf('unstable')[0]!;
    const spawned = await harness.invoke('unstable', 'spawn');
    const children = (spawned.data as { pids: number[] }).pids;
    expect(children.every(isAlive)).toBe(true);
    await harness.bridge.stop();
    expect(isAlive(host)).toBe(false);
    await waitFor(() => children.every((pid) => !isAlive(pid)), 5000);
    expect(harness.bridge.adapter.allPids()).toEqual([]);
  });

  it('ends the processes it started when its stdin closes without a signal (the Core was killed)', async () => {
    const folder = join(FIXTURES, 'folders', 'unstable');
    const host = spawn('/usr/bin/python3', ['-B', HOST_SCRIPT], {
      cwd: folder,
      detached: true,
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    const lines = createInterface({ input: host.stdout! })[Symbol.asyncIterator]();
    host.stdin!.write(
      `${JSON.stringify({ type: 'init', protocol: 1, mode: 'folder', plugin_dir: folder, module: null, class: null, config: {}, manifest: null })}\n`,
    );
    expect(JSON.parse((await lines.next()).value as string)).toMatchObject({ type: 'hello', plugins: [{ class: 'UnstablePlugin', kind: 'generic' }] });
    host.stdin!.write(
      `${JSON.stringify({ type: 'invoke', id: 'r1', target: 'UnstablePlugin', capability: 'spawn', params: {}, deadline: Date.now() + 10_000, request: {} })}\n`,
    );
    const result = JSON.parse((await lines.next()).value as string) as { ok: boolean; value: { data: { pids: number[] } } };
    const [sameGroup] = result.value.data.pids;
    expect(isAlive(sameGroup!)).toBe(true);
    host.stdin!.end();
    await once(host, 'close');
    await waitFor(() => !isAlive(sameGroup!), 5000);
    // The one that left the group (its own session) is the Core's to end: it lists descendants before signalling.
    process.kill(result.value.data.pids[1]!, 'SIGKILL');
  });

  it("gives the host PATH, HOME, LANG, TZ and the manifest's env, never the Core's secrets", async () => {
    const coreEnv = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: '/home/core',
      LANG: 'C.UTF-8',
      TZ: 'Europe/Berlin',
      HOMECLAW_ADMIN_TOKEN: 'admin-secret',
      HOMECLAW_LLM_API_KEY: 'sk-secret',
      OPENAI_API_KEY: 'sk-other',
      AWS_SECRET_ACCESS_KEY: 'aws-secret',
    };
    harness = await startHarness({ folders: ['unstable'], env: coreEnv });
    const seen = (await harness.invoke('unstable', 'environment')).data as Record<string, string>;
    // What the operating system gave the process, not only what Python reports.
    const actual = environOf(harness.bridge.adapter.pidsOf('unstable')[0]!);
    for (const env of [seen, actual]) {
      expect(env).toMatchObject({ HOME: '/home/core', LANG: 'C.UTF-8', TZ: 'Europe/Berlin', GREETING: 'hello from the manifest' });
      expect(Object.keys(env).sort()).toEqual(['GREETING', 'HOME', 'LANG', 'PATH', 'TZ']);
      expect(JSON.stringify(env)).not.toMatch(/secret|sk-/);
    }
  });

  it('puts a plugin in state error when its interpreter is missing or its import never finishes', async () => {
    harness = await startHarness({ folders: ['echo'], settings: { startup_timeout_ms: 1500 } });
    writeFileSync(
      join(harness.pluginsDir, 'echo', 'plugin.yaml'),
      'id: echo\nname: Echo\ndescription: Echoes.\ntype: python\nconfig: { python: /nonexistent/python3 }\n',
    );
    await harness.loader.reload(join(harness.pluginsDir, 'echo'));
    expect(harness.registry.get('echo')).toMatchObject({ state: 'error', state_reason: 'Python interpreter not found: /nonexistent/python3' });

    writeFileSync(join(harness.pluginsDir, 'echo', 'plugin.yaml'), 'id: echo\nname: Echo\ndescription: Echoes.\ntype: python\n');
    writeFileSync(join(harness.pluginsDir, 'echo', 'plugin.py'), 'import time\nwhile True:\n    time.sleep(0.1)\n');
    await harness.loader.reload(join(harness.pluginsDir, 'echo'));
    expect(harness.registry.get('echo')?.state).toBe('error');
    expect(harness.registry.get('echo')?.state_reason).toContain('did not start within 1500 ms');
    expect(harness.bridge.adapter.allPids()).toEqual([]);
  });
});

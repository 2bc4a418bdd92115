import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createSubprocessAdapter } from '../../src/adapters/subprocess.js';
import { silentLogger } from '../../src/log.js';
import { call, descriptor, isAlive, record, waitFor } from './helpers.js';

const FIXTURES = resolve('test/fixtures/adapters/subprocess');
const adapter = createSubprocessAdapter({ log: silentLogger(), kill_grace_ms: 300, max_output_bytes: 256 * 1024 });
const tmp = mkdtempSync(join(tmpdir(), 'hc-subprocess-'));

afterEach(async () => {
  await adapter.stop?.();
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function plugin(config: Record<string, unknown>) {
  return record(descriptor('proc', 'subprocess', { plugin_dir: FIXTURES, ...(config as object) }));
}

describe('subprocess adapter', () => {
  it('writes the request to stdin and reads the result from stdout, in the plugin folder with env merged', async () => {
    const rec = plugin({ command: process.execPath, args: ['echo-result.mjs', 'one'], env: { GREETING: 'hi' } });
    const result = await adapter.invoke(call(rec, { city: 'Oslo' }));
    expect(result.success).toBe(true);
    expect(result.text).toBe('echo run: {"city":"Oslo"}');
    // The ids come from the request, never from what the plugin claims.
    expect(result.request_id).toMatch(/^req-/);
    expect(result.plugin_id).toBe('proc');
    expect(result.data).toEqual({ cwd: FIXTURES, env_greeting: 'hi', args: ['one'] });
  });

  it('takes non-JSON stdout as a successful text answer', async () => {
    const result = await adapter.invoke(call(plugin({ command: 'sh', args: ['plain-text.sh'] })));
    expect(result).toMatchObject({ success: true, text: 'just some text' });
  });

  it('fails with stderr when nothing is written to stdout', async () => {
    const result = await adapter.invoke(call(plugin({ command: 'sh', args: ['stderr-only.sh'] })));
    expect(result.success).toBe(false);
    expect(result.error_code).toBe('plugin_error');
    expect(result.error).toContain('exited with code 3');
    expect(result.error).toContain('something went badly wrong');
  });

  it('passes on a failure the plugin reports as JSON', async () => {
    const result = await adapter.invoke(call(plugin({ command: process.execPath, args: ['fails-with-json.mjs'] })));
    expect(result).toMatchObject({ success: false, error: 'the lamp is unreachable', error_code: 'plugin_error' });
  });

  it('says "command not found" for a missing binary', async () => {
    const result = await adapter.invoke(call(plugin({ command: 'no-such-binary-hc', args: [] })));
    expect(result.success).toBe(false);
    expect(result.error).toContain('command not found: no-such-binary-hc');
  });

  it('refuses a working directory that does not exist', async () => {
    const result = await adapter.invoke(call(plugin({ command: 'sh', args: ['plain-text.sh'], cwd: '/nonexistent/dir' })));
    expect(result.error).toContain('working directory not found');
  });

  it('kills the whole process tree when the deadline aborts the call', async () => {
    const pidFile = join(tmp, 'pids');
    const controller = new AbortController();
    const rec = plugin({ command: 'sh', args: ['never-exits.sh'], env: { PID_FILE: pidFile } });
    const pending = adapter.invoke(call(rec, {}, { signal: controller.signal }));
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim().split(' ').length === 2);
    const pids = readFileSync(pidFile, 'utf8').trim().split(' ').map(Number);
    expect(pids.every(isAlive)).toBe(true);
    controller.abort(new Error('plugin "proc" did not answer within 0.5 s (run)'));
    const result = await pending;
    expect(result).toMatchObject({ success: false, error_code: 'timeout' });
    // The shell ignores SIGTERM, so this also proves the SIGKILL follow-up reaches the group.
    await waitFor(() => pids.every((pid) => !isAlive(pid)), 3000);
    expect(adapter.running()).toEqual([]);
  });

  it('kills a process that floods stdout and says why', async () => {
    const started = Date.now();
    const result = await adapter.invoke(call(plugin({ command: process.execPath, args: ['flood.mjs'] })));
    expect(result.success).toBe(false);
    expect(result.error).toContain('more than 262144 bytes to stdout');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('runs a Python plugin through /usr/bin/python3', async () => {
    const result = await adapter.invoke(call(plugin({ command: '/usr/bin/python3', args: ['python-plugin.py'] }), { name: 'Ada' }));
    expect(result).toMatchObject({ success: true, text: 'hello Ada from python', data: { version: 3 } });
  });

  it('health() says whether the command can be started', async () => {
    expect(await adapter.health!(plugin({ command: 'sh' }))).toMatchObject({ ok: true });
    expect(await adapter.health!(plugin({ command: process.execPath }))).toMatchObject({ ok: true });
    expect(await adapter.health!(plugin({ command: 'no-such-binary-hc' }))).toEqual({ ok: false, detail: 'command not found: no-such-binary-hc' });
    expect(await adapter.health!(plugin({ command: './plain-text.sh' }))).toMatchObject({ ok: true });
    expect(await adapter.health!(plugin({ command: './python-plugin.py' }))).toMatchObject({ ok: false });
  });

  it('stop() kills calls still running (no orphans after shutdown)', async () => {
    const pidFile = join(tmp, 'pids-stop');
    const rec = plugin({ command: 'sh', args: ['never-exits.sh'], env: { PID_FILE: pidFile } });
    const pending = adapter.invoke(call(rec));
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim().split(' ').length === 2);
    const pids = readFileSync(pidFile, 'utf8').trim().split(' ').map(Number);
    await adapter.stop?.();
    const result = await pending;
    expect(result.success).toBe(false);
    await waitFor(() => pids.every((pid) => !isAlive(pid)), 3000);
  });
});

// The bus end to end, as a newcomer would use it: `homeclaw start` as a real process, plugins in other
// processes and languages, the CLI invoking them; the same Core against an external Mosquitto; plugins
// re-registering after a Core restart; credentials and ACLs with real logins.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { PluginResult } from '../../src/protocol/types.js';
import { startTestCore, testConfig, type TestCore } from '../helpers/core.js';
import { ensureBuilt } from '../helpers/build.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { connectTestClient } from '../helpers/mqtt-client.js';
import { coreProcessEnv } from '../helpers/core-process-env.js';
import { freePort } from '../helpers/ports.js';
import { startChildPlugin, type ChildPlugin } from '../fixtures/sdk/child-plugin.js';
import { startCore } from '../../src/main.js';
import { silentLogger } from '../../src/log.js';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..', '..');
const cli = join(root, 'dist', 'src', 'cli.js');
const pluginProcess = join(root, 'test', 'fixtures', 'sdk', 'plugin-process.mjs');
const pythonExample = join(root, 'scripts', 'examples', 'python', 'weather_plugin.py');

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

async function homeclaw(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  try {
    const { stdout, stderr } = await run(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** `homeclaw start` as a child process; resolves once it prints where it listens. */
function startCoreProcess(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; output: () => string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [cli, 'start'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const timer = setTimeout(() => reject(new Error(`homeclaw start did not come up:\n${output}`)), 60_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('HomeClaw Core running')) {
        clearTimeout(timer);
        resolvePromise({ child, output: () => output });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`homeclaw start exited with ${code}:\n${output}`)));
  });
}

function stopProcess(child: ChildProcess): Promise<number | null> {
  return new Promise((resolveExit) => {
    if (child.exitCode !== null) return resolveExit(child.exitCode);
    child.removeAllListeners('exit');
    child.once('exit', (code) => resolveExit(code));
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
  });
}

beforeAll(() => ensureBuilt(), 180_000);

describe('a newcomer: homeclaw start, the Python example plugin, the CLI', () => {
  let core: { child: ChildProcess; output: () => string };
  let python: ChildPlugin | undefined;
  let env: NodeJS.ProcessEnv;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-newcomer-'));
    env = await coreProcessEnv(dataDir, mkdtempSync(join(tmpdir(), 'homeclaw-newcomer-plugins-')));
    core = await startCoreProcess(env);
  });

  afterAll(async () => {
    await python?.stop('SIGTERM');
    if (core) expect(await stopProcess(core.child)).toBe(0);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes an admin token the CLI picks up, registers the Python plugin, lists and invokes it', async () => {
    expect(existsSync(join(dataDir, 'admin.token'))).toBe(true);
    expect(statSync(join(dataDir, 'admin.token')).mode & 0o777).toBe(0o600);
    python = startChildPlugin('/usr/bin/python3', [pythonExample, '--url', `mqtt://127.0.0.1:${env.HOMECLAW_MQTT_PORT}`, '--id', 'pyweather']);
    await python.registered;

    const list = await homeclaw(['plugins', 'list', '--json'], env);
    expect(list.code).toBe(0);
    const plugins = JSON.parse(list.stdout) as { id: string; type: string; source: string; state: string; capabilities: string[] }[];
    expect(plugins).toContainEqual(expect.objectContaining({ id: 'pyweather', type: 'mqtt', source: 'external', state: 'online' }));

    const table = await homeclaw(['plugins', 'list'], env);
    expect(table.stdout).toMatch(/pyweather\s+mqtt\s+external\s+online/);

    const caps = plugins.find((p) => p.id === 'pyweather')?.capabilities ?? [];
    const capability = caps[0] as string;
    const ok = await homeclaw(['invoke', 'pyweather', capability, 'city=Paris', '--json'], env);
    expect(ok.code).toBe(0);
    const result = JSON.parse(ok.stdout) as PluginResult;
    expect(result.success).toBe(true);
    expect(result.text).toMatch(/Paris/i);

    const bad = await homeclaw(['invoke', 'pyweather', capability, 'city=Atlantis'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/failed/);

    const unknown = await homeclaw(['invoke', 'nosuch', 'run'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/no plugin with id "nosuch"/);

    const badArgs = await homeclaw(['invoke', 'pyweather', capability, 'oops'], env);
    expect(badArgs.code).toBe(2);
    expect(badArgs.stderr).toMatch(/key=value/);
  });

  it('exits non-zero with a clear message when the Core is unreachable or the token is wrong', async () => {
    const down = await homeclaw(['plugins', 'list'], { ...env, HOMECLAW_URL: `http://127.0.0.1:${await freePort()}` });
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/cannot reach the Core/);
    const wrong = await homeclaw(['plugins', 'list'], { ...env, HOMECLAW_ADMIN_TOKEN: 'wrong-token-wrong-token' });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/refused the admin token/);
  });

  it('creates MQTT credentials whose plugin may only claim its own id', async () => {
    const created = await homeclaw(['credentials', 'add', 'lamp', '--role', 'plugin', '--json'], env);
    expect(created.code).toBe(0);
    const { name, password } = JSON.parse(created.stdout) as { name: string; password: string };
    expect(name).toBe('lamp');
    expect(password.length).toBeGreaterThanOrEqual(16);
    const url = `mqtt://127.0.0.1:${env.HOMECLAW_MQTT_PORT}`;

    const lamp = await connectTestClient(url, { clientId: 'lamp-device', username: 'lamp', password });
    await lamp.subscribe(topics.registered('lamp'));
    await lamp.publish(topics.register(), {
      id: 'lamp',
      name: 'Lamp',
      description: 'A lamp',
      capabilities: [{ id: 'on', name: 'On', description: 'on', parameters: [] }],
      epoch: 1,
    });
    expect((await lamp.waitFor(topics.registered('lamp'))).json()).toEqual({ plugin_id: 'lamp', ok: true });
    await lamp.end(true);
    const intruder = await connectTestClient(url, { clientId: 'lamp-intruder', username: 'lamp', password });
    // The ACL lets a plugin subscribe only to its own topics.
    await expect(intruder.subscribe(topics.registered('fan'))).rejects.toThrow();
    await intruder.subscribe(topics.registeredInvalid());
    await intruder.publish(topics.register(), {
      id: 'fan',
      name: 'Fan',
      description: 'A fan',
      capabilities: [{ id: 'on', name: 'On', description: 'on', parameters: [] }],
      epoch: 1,
    });
    // The refusal cannot go to registered/fan, which this credential may not read: it comes on _invalid.
    const refusal = (await intruder.waitFor(topics.registeredInvalid())).json<{ ok: boolean; client_id: string; errors: { message: string }[] }>();
    expect(refusal).toMatchObject({ ok: false, client_id: 'lamp-intruder' });
    expect(refusal.errors.map((e) => e.message).join()).toMatch(/credentials do not allow the plugin id "fan"/);
    const list = JSON.parse((await homeclaw(['plugins', 'list', '--json'], env)).stdout) as { id: string }[];
    expect(list.some((p) => p.id === 'fan')).toBe(false);
    await intruder.end(true);

    const wrongPassword = await connectTestClient(url, { clientId: 'lamp-bad', username: 'lamp', password: 'nope' }).catch((e: Error) => e);
    expect(wrongPassword).toBeInstanceOf(Error);
  });
});

describe('external broker mode against a real Mosquitto', () => {
  let mosquitto: MosquittoHandle;
  let core: TestCore;
  let plugin: ChildPlugin | undefined;

  beforeAll(async () => {
    mosquitto = await startMosquitto({ extraConfig: 'set_tcp_nodelay true' });
    core = await startTestCore({ overrides: { broker: { url: mosquitto.url }, liveness: { grace_sec: 1 } } });
  });

  afterAll(async () => {
    await plugin?.stop('SIGKILL');
    await core?.cleanup();
    await mosquitto?.stop();
  });

  it('behaves like the embedded broker: register, invoke, will, re-registration after a Core restart', async () => {
    const status = await core.api<{ broker: { mode: string } }>('GET', '/api/status');
    expect(status.body.broker.mode).toBe('external');
    plugin = startChildPlugin(process.execPath, [pluginProcess, mosquitto.url, 'extecho', '1']);
    await plugin.registered;
    await expect.poll(async () => (await core.api<{ state: string }>('GET', '/api/plugins/extecho')).body.state).toBe('online');
    const res = await core.api<PluginResult>('POST', '/v1/plugins/extecho/tools/echo/run', { text: 'through mosquitto' });
    expect(res.body).toMatchObject({ success: true, text: 'echo: through mosquitto' });

    // A Core restart: the retained birth makes the plugin re-register by itself.
    await core.cleanup({ keepData: true });
    core = await startTestCore({ dataDir: core.dataDir, overrides: { broker: { url: mosquitto.url }, liveness: { grace_sec: 1 } } });
    await expect.poll(async () => (await core.api<{ state: string }>('GET', '/api/plugins/extecho')).body.state, { timeout: 10_000 }).toBe('online');
    const again = await core.api<PluginResult>('POST', '/v1/plugins/extecho/tools/echo/run', { text: 'after restart' });
    expect(again.body.text).toBe('echo: after restart');

    // Killing the plugin fires its will through Mosquitto: offline at once, calls fail immediately.
    await plugin.stop('SIGKILL');
    plugin = undefined;
    await expect.poll(async () => (await core.api<{ state: string }>('GET', '/api/plugins/extecho')).body.state, { timeout: 10_000 }).toBe('offline');
    const refused = await core.api<PluginResult>('POST', '/v1/plugins/extecho/tools/echo/run', { text: 'x' });
    expect(refused.body.error_code).toBe('offline');
  });

  it('rejects bad registrations with errors on the reply topic, through Mosquitto too', async () => {
    const client = await connectTestClient(mosquitto.url, { clientId: 'ext-bad' });
    await client.subscribe(topics.registeredInvalid());
    await client.publish(topics.register(), '{not json');
    const ack = (await client.waitFor(topics.registeredInvalid())).json<{ ok: boolean; errors: { message: string }[] }>();
    expect(ack.ok).toBe(false);
    expect(ack.errors[0]?.message).toMatch(/JSON/);
    await client.end(true);
  });
});

describe('embedded broker: SDK plugins come back after a Core restart on the same port', () => {
  it('re-registers on the new birth and answers again', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-restart-'));
    const port = await freePort();
    const config = () => testConfig(dataDir, { overrides: { broker: { port } } });
    let core = await startCore({ config: config(), log: silentLogger() });
    const plugin = startChildPlugin(process.execPath, [pluginProcess, `mqtt://127.0.0.1:${port}`, 'phoenix', '1']);
    try {
      await plugin.registered;
      expect((await core.ctx.dispatcher.invoke({ plugin_id: 'phoenix', parameters: { text: 'one' } })).text).toBe('echo: one');
      await core.stop();
      core = await startCore({ config: config(), log: silentLogger() });
      await expect.poll(() => core.ctx.registry.get('phoenix')?.state, { timeout: 15_000 }).toBe('online');
      expect((await core.ctx.dispatcher.invoke({ plugin_id: 'phoenix', parameters: { text: 'two' } })).text).toBe('echo: two');
    } finally {
      await plugin.stop('SIGKILL');
      await core.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

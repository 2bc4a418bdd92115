// Plugins in their own processes: the compiled SDK (will on kill, graceful stop, the Node example),
// the Python example on paho-mqtt and the shell example on mosquitto_sub/mosquitto_pub.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/build.js';
import { topics } from '../../src/protocol/topics.js';
import type { PluginStatusMessage, RegisterMessage } from '../../src/protocol/types.js';
import { normalizeDescriptor } from '../../src/protocol/descriptor/normalize.js';
import { validatePayload } from '../../src/protocol/validate.js';
import { startTestBroker, type TestBroker } from '../fixtures/sdk/broker.js';
import { startChildPlugin, type ChildPlugin } from '../fixtures/sdk/child-plugin.js';
import { FakeCore } from '../helpers/fake-core.js';

const at = (path: string): string => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const PYTHON = '/usr/bin/python3';

let broker: TestBroker;
let core: FakeCore;
const children: ChildPlugin[] = [];

beforeAll(async () => {
  // The child processes import the compiled SDK.
  await ensureBuilt();
  if (!existsSync(at('dist/src/sdk/index.js'))) throw new Error('dist/src/sdk/index.js was not built');
  broker = await startTestBroker();
  core = await FakeCore.start(broker.url);
}, 120_000);

afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => c.stop('SIGKILL')));
});

afterAll(async () => {
  await core?.close();
  await broker?.close();
});

function start(command: string, args: string[]): ChildPlugin {
  const child = startChildPlugin(command, args);
  children.push(child);
  return child;
}

async function statusAfter(pluginId: string, index: number, timeoutMs = 10_000): Promise<PluginStatusMessage> {
  const message = await core.waitFor((m) => m.topic === topics.status(pluginId) && core.statuses(pluginId).length > index, timeoutMs, true);
  void message;
  return core.statuses(pluginId)[index]!;
}

describe('compiled SDK in a separate process', () => {
  it('its will publishes {state:offline, epoch} when the process is killed', async () => {
    const plugin = start('node', [at('test/fixtures/sdk/plugin-process.mjs'), broker.url, 'killed-plugin', '1']);
    const registered = await plugin.registered;
    const epoch = registered['epoch'] as number;
    const { result } = await core.invoke('killed-plugin', 'echo', { text: 'hi' });
    expect(result).toMatchObject({ success: true, text: 'echo: hi' });
    const seen = core.statuses('killed-plugin').length;
    expect(core.statuses('killed-plugin').at(-1)).toMatchObject({ state: 'online', epoch });

    await plugin.stop('SIGKILL');
    const will = await statusAfter('killed-plugin', seen);
    expect(will).toEqual({ state: 'offline', epoch });
    // It is retained: a Core that (re)subscribes later still learns the plugin is gone.
    const late = await FakeCore.start(broker.url, { publishBirth: false });
    try {
      const retained = await late.waitFor((m) => m.topic === topics.status('killed-plugin'), 5000, true);
      expect(retained.retain).toBe(true);
      expect(retained.json).toEqual({ state: 'offline', epoch });
    } finally {
      await late.close();
    }
  });

  it('a restarted process registers with a newer epoch, so the older will can be told apart', async () => {
    const first = start('node', [at('test/fixtures/sdk/plugin-process.mjs'), broker.url, 'epoch-plugin', '1']);
    const epoch1 = (await first.registered)['epoch'] as number;
    await first.stop('SIGKILL');
    const second = start('node', [at('test/fixtures/sdk/plugin-process.mjs'), broker.url, 'epoch-plugin', '1']);
    const epoch2 = (await second.registered)['epoch'] as number;
    expect(epoch2).toBeGreaterThan(epoch1);
    const registrations = core.registrations('epoch-plugin').map((r) => r['epoch']);
    expect(registrations).toEqual([epoch1, epoch2]);
  });

  it('heartbeats from the process arrive with increasing seq', async () => {
    const plugin = start('node', [at('test/fixtures/sdk/plugin-process.mjs'), broker.url, 'beating-plugin', '0.2']);
    await plugin.registered;
    await core.waitFor(() => core.heartbeats('beating-plugin').length >= 3, 5000, true);
    const seqs = core.heartbeats('beating-plugin').map((b) => b.seq);
    expect(seqs.slice(0, 3)).toEqual([1, 2, 3]);
  });

  it('a graceful stop publishes the offline status itself', async () => {
    const plugin = start('node', [at('test/fixtures/sdk/plugin-process.mjs'), broker.url, 'graceful-plugin', '1']);
    const epoch = (await plugin.registered)['epoch'] as number;
    const seen = core.statuses('graceful-plugin').length;
    const exit = await plugin.stop('SIGTERM');
    expect(exit, plugin.stderr()).toEqual({ code: 0, signal: null });
    expect(await statusAfter('graceful-plugin', seen)).toMatchObject({ state: 'offline', epoch });
  });

  it('the Node example registers and answers', async () => {
    const plugin = start('node', [at('scripts/examples/node/hello_plugin.mjs'), '--url', broker.url, '--id', 'hello-example']);
    await plugin.registered;
    const { result } = await core.invoke('hello-example', 'greet', { name: 'Ada', excited: true });
    expect(result).toMatchObject({ success: true, text: 'Hello, Ada!', data: { greeting: 'Hello, Ada!' } });
  });
});

describe('Python example (paho-mqtt)', () => {
  it('registers a valid descriptor, answers forecasts, refuses bad calls, heartbeats and leaves a will', async () => {
    const plugin = start(PYTHON, [at('scripts/examples/python/weather_plugin.py'), '--url', broker.url, '--id', 'pyweather', '--heartbeat-sec', '0.3']);
    const registered = await plugin.registered;
    const registration = core.registrations('pyweather')[0] as RegisterMessage;
    expect(validatePayload('register', registration).ok).toBe(true);
    expect(registration).toMatchObject({ id: 'pyweather', epoch: registered['epoch'], heartbeat_interval_sec: 0.3 });
    const normalized = normalizeDescriptor(registration, { source: 'external', default_type: 'mqtt' });
    expect(normalized.ok).toBe(true);

    const ok = await core.invoke('pyweather', 'forecast', { city: 'Paris' });
    expect(validatePayload('result', ok.result).ok).toBe(true);
    expect(ok.result).toMatchObject({ success: true, text: 'Paris: sunny, 24°C', data: { city: 'Paris', temperature_c: 24 } });
    const unknownCity = await core.invoke('pyweather', 'forecast', { city: 'Atlantis' });
    expect(unknownCity.result).toMatchObject({ success: false });
    expect(unknownCity.result.error).toContain('no forecast for "Atlantis"');
    const badParams = await core.invoke('pyweather', 'forecast', { days: 'x' });
    expect(badParams.result.error).toContain('missing required parameter "city"');
    expect(badParams.result.error).toContain('parameter days must be integer');
    const unknownCapability = await core.invoke('pyweather', 'tides', {});
    expect(unknownCapability.result.error).toContain('unknown capability "tides"');

    await core.waitFor(() => core.heartbeats('pyweather').length >= 2, 5000, true);
    const seqs = core.heartbeats('pyweather').map((b) => b.seq);
    expect(seqs.slice(0, 2)).toEqual([1, 2]);

    // Re-registers on a newer Core birth and on control.
    await core.birth();
    await core.waitForRegistration('pyweather', 2);
    await core.control('pyweather');
    await core.waitForRegistration('pyweather', 3);

    const seen = core.statuses('pyweather').length;
    await plugin.stop('SIGKILL');
    expect(await statusAfter('pyweather', seen)).toEqual({ state: 'offline', epoch: registered['epoch'] });
  });

  it('stops with exit code 2 and the errors on stderr when the registration is refused', async () => {
    core.setAckPolicy((m) => ({ plugin_id: String(m['id']), ok: false, errors: [{ path: '/capabilities/0', message: 'not today' }] }));
    try {
      const plugin = start(PYTHON, [at('scripts/examples/python/weather_plugin.py'), '--url', broker.url, '--id', 'pyrefused']);
      const exit = await plugin.exited;
      expect(exit.code).toBe(2);
      expect(plugin.stderr()).toContain('registration refused: /capabilities/0 not today');
    } finally {
      core.setAckPolicy((m) => ({ plugin_id: String(m['id']), ok: true }));
    }
  });
});

describe('shell example (mosquitto_sub / mosquitto_pub)', () => {
  const script = at('scripts/examples/shell/echo_plugin.sh');
  const descriptorFile = at('scripts/examples/shell/echo_plugin.json');

  it('registers from its descriptor file, echoes, refuses bad calls, heartbeats and leaves a will', async () => {
    const plugin = start('bash', [script, '--url', broker.url, '--descriptor', descriptorFile, '--id', 'shecho', '--heartbeat-sec', '1']);
    const registered = await plugin.registered;
    const registration = core.registrations('shecho')[0] as RegisterMessage;
    expect(validatePayload('register', registration).ok).toBe(true);
    expect(registration).toMatchObject({ id: 'shecho', epoch: registered['epoch'], heartbeat_interval_sec: 1, name: 'Shell echo' });
    expect(normalizeDescriptor(registration, { source: 'external', default_type: 'mqtt' }).ok).toBe(true);

    const { result } = await core.invoke('shecho', 'echo', { text: 'hello "world" \\ ünïcode' });
    expect(validatePayload('result', result).ok).toBe(true);
    expect(result).toMatchObject({ success: true, text: 'hello "world" \\ ünïcode', data: { echoed: { text: 'hello "world" \\ ünïcode' } } });
    const unknown = await core.invoke('shecho', 'shout', { text: 'x' });
    expect(unknown.result.error).toContain('unknown capability "shout"');
    const bad = await core.invoke('shecho', 'echo', { text: 42 });
    expect(bad.result).toMatchObject({ success: false });
    expect(bad.result.error).toContain('text must be string');
    // An invoke with a request id that would change the topic structure is dropped, not answered.
    await core.publishRaw(
      topics.invoke('shecho'),
      JSON.stringify({ request_id: 'a/b', plugin_id: 'shecho', capability_id: 'echo', parameters: { text: 'x' }, deadline: Date.now() + 5000 }),
    );
    const after = await core.invoke('shecho', 'echo', { text: 'still here' });
    expect(after.result.text).toBe('still here');
    expect(core.messages.some((m) => m.topic.endsWith('/a/b'))).toBe(false);

    await core.waitFor(() => core.heartbeats('shecho').length >= 2, 6000, true);
    expect(
      core
        .heartbeats('shecho')
        .slice(0, 2)
        .map((b) => [b.seq, b.epoch]),
    ).toEqual([
      [1, registered['epoch']],
      [2, registered['epoch']],
    ]);

    await core.control('shecho');
    await core.waitForRegistration('shecho', 2);
    await core.birth();
    await core.waitForRegistration('shecho', 3);

    const seen = core.statuses('shecho').length;
    // A crash of the whole process group (bash and its mosquitto_sub): the will must fire.
    await plugin.stop('SIGKILL');
    expect(await statusAfter('shecho', seen)).toEqual({ state: 'offline', epoch: registered['epoch'] });
  });

  it('a graceful stop publishes the offline status', async () => {
    const plugin = start('bash', [script, '--url', broker.url, '--descriptor', descriptorFile, '--id', 'shecho2']);
    const epoch = (await plugin.registered)['epoch'] as number;
    const seen = core.statuses('shecho2').length;
    await plugin.stop('SIGTERM');
    expect(await statusAfter('shecho2', seen)).toMatchObject({ state: 'offline', epoch });
  });
});

// Attack: a command published with the retain flag is stored by the broker and delivered again on every
// subscription. With an external broker a retained channel message placed a new order on each Core
// restart, and a retained register brought back a removed plugin; a retained invoke would run again
// whenever a plugin reconnects. Defences: the Core ignores and clears retained messages on its command
// topics, the embedded broker never stores a command, and the SDK and the examples ignore retained
// invokes.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { ExternalBus } from '../../src/bus/external-bus.js';
import type { IncomingMessage } from '../../src/bus/core-bus.js';
import { topics } from '../../src/protocol/topics.js';
import type { ChannelMessageOut, PluginResult } from '../../src/protocol/types.js';
import { ensureBuilt } from '../helpers/build.js';
import { startTestCore } from '../helpers/core.js';
import { coreProcessEnv } from '../helpers/core-process-env.js';
import { api, homeclaw, startCoreProcess, type CoreProcess } from '../helpers/core-process.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { makePluginsDir } from '../e2e/helpers.js';
import { startChildPlugin, type ChildPlugin } from '../fixtures/sdk/child-plugin.js';

const root = resolve(import.meta.dirname, '..', '..');
const TOKEN = 'retained-admin-token-0123456789';
const ORDER = '/buy place_order item=milk address="12 Oak St" phone=555-0100 contact_name=Alice';

/** The messages a fresh subscriber gets at once on these filters: what the broker has retained. */
async function retainedOn(url: string, filters: string[]): Promise<{ topic: string; payload: string }[]> {
  const probe = await connectTestClient(url);
  for (const filter of filters) await probe.subscribe(filter);
  await new Promise((r) => setTimeout(r, 500));
  await probe.end(true);
  return probe.received.filter((m) => m.retain && m.payload.length > 0).map((m) => ({ topic: m.topic, payload: m.payload.toString() }));
}

function ghost(id: string): Record<string, unknown> {
  return { id, name: 'Ghost', description: 'Registered by a retained message.', epoch: 1, capabilities: [{ id: 'boo', description: 'Boo' }] };
}

describe('with an external Mosquitto', () => {
  let mosquitto: MosquittoHandle;
  let persistDir: string;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;
  let core: CoreProcess | undefined;
  let observer: TestClient;

  beforeAll(async () => {
    await ensureBuilt();
    // Persistent, so retained messages survive a broker restart as they do in a real installation.
    persistDir = mkdtempSync(join(tmpdir(), 'homeclaw-retained-db-'));
    mosquitto = await startMosquitto({ extraConfig: `persistence true\npersistence_location ${persistDir}/` });
    dataDir = mkdtempSync(join(tmpdir(), 'homeclaw-retained-'));
    // With an external broker a channel speaks for the users the config binds to it.
    const configFile = join(dataDir, 'homeclaw.yaml');
    writeFileSync(configFile, 'access:\n  channels:\n    web: { users: [alice] }\n');
    env = await coreProcessEnv(dataDir, makePluginsDir({ shipped: [{ id: 'buy' }] }), {
      HOMECLAW_CONFIG: configFile,
      HOMECLAW_BROKER_URL: mosquitto.url,
      HOMECLAW_ADMIN_TOKEN: TOKEN,
    });
    core = await startCoreProcess(env);
    // Reconnecting (and resubscribing) after a broker restart, so it sees what happens after one.
    observer = await connectTestClient(mosquitto.url, { reconnectPeriod: 200 });
    await observer.subscribe(topics.channelOut('web'));
    await observer.subscribe('homeclaw/plugins/result/+');
  });

  afterAll(async () => {
    await observer?.end(true);
    await core?.stop();
    await mosquitto?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(persistDir, { recursive: true, force: true });
  });

  it('a retained channel message places no order on Core restart, a retained register resurrects no ghost', async () => {
    const orderId = randomUUID();
    const replies = (): ChannelMessageOut[] =>
      observer.received
        .filter((m) => m.topic === topics.channelOut('web'))
        .map((m) => m.json<ChannelMessageOut>())
        .filter((r) => r.request_id === orderId);
    // Delivered live, the message is an ordinary command: one order.
    await observer.publish(topics.channelIn('web'), { request_id: orderId, user_id: 'alice', text: ORDER }, { retain: true });
    await observer.waitFor(topics.channelOut('web'), (m) => m.json<ChannelMessageOut>().request_id === orderId, 15_000);
    expect(replies()).toHaveLength(1);
    expect(replies()[0]!.text).toMatch(/Order placed/);

    // A ghost registered by a retained message, then removed by the administrator.
    await observer.publish(topics.register(), ghost('ghost'), { retain: true });
    await new Promise((r) => setTimeout(r, 500));
    await api(env.HOMECLAW_URL as string, TOKEN, 'POST', '/api/plugins/unregister', { plugin_id: 'ghost' });

    await core!.stop();
    core = await startCoreProcess(env);
    // Long enough for a replay to be answered: the first order took well under this.
    await new Promise((r) => setTimeout(r, 2_000));

    expect(replies()).toHaveLength(1);
    const list = await homeclaw(['plugins', 'list', '--json'], env);
    expect((JSON.parse(list.stdout) as { id: string }[]).map((p) => p.id)).not.toContain('ghost');
    // Cleared on the broker, so no later subscriber (another Core, a restart) sees them either.
    expect(await retainedOn(mosquitto.url, [topics.channelIn('web'), topics.register()])).toEqual([]);
    expect(core.output()).toMatch(/retained command ignored and cleared/);
  });

  it('the Core bus ignores and clears retained messages on every command topic, and only those', async () => {
    const commands = [
      topics.register(),
      topics.unregister(),
      topics.heartbeat('lamp'),
      topics.result(randomUUID()),
      topics.channelIn('kitchen'),
      'homeclaw/call/lamp/on',
    ];
    for (const topic of commands) await observer.publish(topic, { retained: 'command' }, { retain: true });
    await observer.publish(topics.status('lamp'), { state: 'online', epoch: 1 }, { retain: true });

    const seen: IncomingMessage[] = [];
    const bus = await ExternalBus.connect({ url: mosquitto.url, log: silentLogger(), willPayload: () => '{}' });
    try {
      for (const filter of [
        'homeclaw/plugins/register',
        'homeclaw/plugins/unregister',
        'homeclaw/plugins/heartbeat/+',
        'homeclaw/plugins/result/+',
        'homeclaw/channels/+/in',
        'homeclaw/call/#',
        'homeclaw/plugins/status/+',
      ]) {
        await bus.subscribe(filter, (m) => void seen.push(m));
      }
      await new Promise((r) => setTimeout(r, 1_000));
      expect(seen.map((m) => ({ topic: m.topic, retain: m.retain }))).toEqual([{ topic: topics.status('lamp'), retain: true }]);
    } finally {
      await bus.close();
    }
    expect(await retainedOn(mosquitto.url, ['homeclaw/#'])).toEqual(expect.not.arrayContaining(commands.map((topic) => expect.objectContaining({ topic }))));
    expect((await retainedOn(mosquitto.url, [topics.status('lamp')])).map((m) => m.topic)).toEqual([topics.status('lamp')]);
  });

  it('the Node SDK, the Python example and the shell example ignore retained invokes', async () => {
    const plugins: ChildPlugin[] = [];
    const retainedIds: string[] = [];
    const invoke = async (pluginId: string, capability: string, parameters: Record<string, unknown>): Promise<void> => {
      const request_id = randomUUID();
      retainedIds.push(request_id);
      const request = { request_id, plugin_id: pluginId, capability_id: capability, parameters, deadline: Date.now() + 600_000 };
      await observer.publish(topics.invoke(pluginId), request, { retain: true });
    };
    try {
      // Waiting before the plugins even start: delivered as retained when they subscribe.
      await invoke('sdkplug', 'echo', { text: 'replayed' });
      await invoke('pyplug', 'forecast', { city: 'Paris' });
      await invoke('shplug', 'echo', { text: 'replayed' });
      plugins.push(
        startChildPlugin(process.execPath, [join(root, 'test', 'fixtures', 'sdk', 'plugin-process.mjs'), mosquitto.url, 'sdkplug']),
        startChildPlugin('/usr/bin/python3', [
          join(root, 'scripts', 'examples', 'python', 'weather_plugin.py'),
          '--url',
          mosquitto.url,
          '--id',
          'pyplug',
          '--heartbeat-sec',
          '1',
        ]),
        startChildPlugin(join(root, 'scripts', 'examples', 'shell', 'echo_plugin.sh'), [
          '--url',
          mosquitto.url,
          '--descriptor',
          join(root, 'scripts', 'examples', 'shell', 'echo_plugin.json'),
          '--id',
          'shplug',
          '--heartbeat-sec',
          '1',
        ]),
      );
      await Promise.all(plugins.map((p) => p.registered));
      // And delivered as retained again after every reconnect: a broker restart makes every client resubscribe.
      await mosquitto.restart();
      const calls: [string, string, Record<string, unknown>][] = [
        ['sdkplug', 'echo', { text: 'live' }],
        ['pyplug', 'forecast', { city: 'Paris' }],
        ['shplug', 'echo', { text: 'live' }],
      ];
      for (const [id, capability, parameters] of calls) {
        // Live invokes still work once the plugin is back: it was listening all along.
        let result: PluginResult | undefined;
        for (let i = 0; i < 100 && !result?.success; i++) {
          result = (await api<PluginResult>(env.HOMECLAW_URL as string, TOKEN, 'POST', `/v1/plugins/${id}/tools/${capability}/run`, parameters)).body;
          if (!result.success) await new Promise((r) => setTimeout(r, 200));
        }
        expect(result, id).toMatchObject({ success: true });
      }
      await new Promise((r) => setTimeout(r, 1_000));
      const answered = observer.received.filter((m) => retainedIds.some((id) => m.topic === topics.result(id)));
      expect(answered.map((m) => m.payload.toString())).toEqual([]);
    } finally {
      await Promise.all(plugins.map((p) => p.stop('SIGTERM')));
    }
  });
});

describe('with the embedded broker', () => {
  it('never stores a command with the retain flag, while a retained status is kept', async () => {
    const core = await startTestCore();
    const client = await connectTestClient(core.mqttUrl);
    try {
      const commands = [
        topics.register(),
        topics.unregister(),
        topics.heartbeat('lamp'),
        topics.result(randomUUID()),
        topics.channelIn('web'),
        topics.invoke('lamp'),
        topics.control('lamp'),
        'homeclaw/call/lamp/on',
      ];
      for (const topic of commands) await client.publish(topic, topic === topics.register() ? ghost('ghost') : { retained: 'command' }, { retain: true });
      await client.publish(topics.status('lamp'), { state: 'offline', epoch: 1 }, { retain: true });
      const retained = await retainedOn(core.mqttUrl, ['homeclaw/#']);
      expect(retained.map((m) => m.topic).sort()).toEqual([topics.coreStatus(), topics.status('lamp')].sort());
    } finally {
      await client.end(true);
      await core.cleanup();
    }
  });
});

// A device that reconnects late never runs a stale command: over MQTT 5 the Core gives every request a
// message expiry equal to the time left to its deadline, so the broker discards it for a session that was
// offline past the deadline. The plugin here keeps a persistent session (paho-mqtt MQTTv5, Clean Start 0,
// Session Expiry 300 s) and goes away without the Core noticing (no will, long heartbeat interval), as a
// device whose Wi-Fi drops does; Mosquitto queues what is published for it meanwhile.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PluginResult } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { LineProcess } from '../fixtures/mqtt5/line-process.js';
import { ensureBuilt, REPO_ROOT } from './helpers.js';

const PLUGIN = join(REPO_ROOT, 'test', 'fixtures', 'mqtt5', 'paho_v5_plugin.py');

let mosquitto: MosquittoHandle | undefined;
let core: TestCore | undefined;
let plugin: LineProcess | undefined;

afterEach(async () => {
  await plugin?.stop();
  await core?.cleanup();
  await mosquitto?.stop();
  plugin = undefined;
  core = undefined;
  mosquitto = undefined;
});

/**
 * Takes the persistent plugin offline, invokes it twice (1 s and 30 s deadlines), waits until the short
 * one is past its deadline and expiry, brings the plugin back and returns what it received.
 */
async function lateReconnect(protocolVersion: 5 | '3.1.1'): Promise<{ short: PluginResult; long: PluginResult; received: string[] }> {
  await ensureBuilt();
  mosquitto = await startMosquitto({ extraConfig: 'set_tcp_nodelay true' });
  core = await startTestCore({ overrides: { broker: { url: mosquitto.url, protocol_version: protocolVersion } } });
  plugin = new LineProcess('/usr/bin/python3', [PLUGIN, '--url', mosquitto.url, '--id', 'late', '--persistent']);
  await plugin.event('registered');
  plugin.send('offline');
  await plugin.event('offline');
  expect(core.ctx.registry.get('late')?.state).toBe('online'); // the Core cannot tell

  const short = core.ctx.dispatcher.invoke({ plugin_id: 'late', capability_id: 'echo', parameters: { text: 'stale' }, timeout_sec: 1 });
  const long = core.ctx.dispatcher.invoke({ plugin_id: 'late', capability_id: 'echo', parameters: { text: 'fresh' }, timeout_sec: 30 });
  const shortResult = await short;
  expect(shortResult).toMatchObject({ success: false, error_code: 'timeout' });
  // The broker counts expiry in whole seconds: by now the 1-second message is well past it.
  await new Promise((resolve) => setTimeout(resolve, 2_500));

  plugin.send('online');
  const reconnected = await plugin.waitFor((event) => event.event === 'connected' && event['session_present'] === true);
  expect(reconnected).toBeDefined();
  const longResult = await long;
  // The plugin reports each invoke on its stdout, which can be read after its result came back over MQTT.
  await plugin.waitFor((event) => event.event === 'invoke' && event['request_id'] === longResult.request_id);
  const received = plugin.events.filter((event) => event.event === 'invoke').map((event) => String(event['request_id']));
  return { short: shortResult, long: longResult, received };
}

describe('a request published while a persistent-session plugin is offline', () => {
  it('over MQTT 5 is never delivered once its deadline passed; one still in time is', async () => {
    const { short, long, received } = await lateReconnect(5);
    expect(long).toMatchObject({ success: true, text: 'paho v5: fresh' });
    expect(received).toContain(long.request_id);
    expect(received).not.toContain(short.request_id);
    expect(received).toHaveLength(1);
  }, 60_000);

  it('over MQTT 3.1.1 (no expiry) reaches the device after its deadline: what MQTT 5 prevents', async () => {
    const { short, long, received } = await lateReconnect('3.1.1');
    expect(long).toMatchObject({ success: true });
    expect(received).toContain(short.request_id);
    expect(received).toContain(long.request_id);
  }, 60_000);
});

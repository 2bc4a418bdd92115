// MQTT 5 and 3.1.1 plugins side by side on one Mosquitto, all invoked through the Core in external mode
// (MQTT 5 by default): the Node SDK with protocol_version 5, paho-mqtt with MQTTv5 (Debian's
// python3-paho-mqtt), the Node SDK on 3.1.1 and the paho 3.1.1 example plugin, each in its own process.
// MQTT 5 plugins get the request's message expiry and a W3C traceparent, the caller's when one was given.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTraceparent } from '../../src/protocol/trace-context.js';
import type { JsonObject, PluginResult } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { startMosquitto, type MosquittoHandle } from '../helpers/mosquitto.js';
import { LineProcess } from '../fixtures/mqtt5/line-process.js';
import { ensureBuilt, REPO_ROOT } from './helpers.js';

async function waitUntil(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'mqtt5');
const PYTHON = '/usr/bin/python3';

let mosquitto: MosquittoHandle;
let core: TestCore;
const processes: LineProcess[] = [];

function start(command: string, args: string[]): LineProcess {
  const child = new LineProcess(command, args);
  processes.push(child);
  return child;
}

async function invokeOverHttp(pluginId: string, capability: string, body: JsonObject, headers: Record<string, string> = {}): Promise<PluginResult> {
  const response = await fetch(`${core.httpUrl}/v1/plugins/${pluginId}/tools/${capability}/run`, {
    method: 'POST',
    headers: { authorization: `Bearer ${core.adminToken}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return (await response.json()) as PluginResult;
}

beforeAll(async () => {
  await ensureBuilt();
  mosquitto = await startMosquitto({ extraConfig: 'set_tcp_nodelay true' });
  core = await startTestCore({ overrides: { broker: { url: mosquitto.url }, dispatch: { default_timeout_sec: 20 } } });
  const plugins = [
    start(process.execPath, [join(FIXTURES, 'sdk-plugin.mjs'), mosquitto.url, 'sdk5', '5']),
    start(process.execPath, [join(FIXTURES, 'sdk-plugin.mjs'), mosquitto.url, 'sdk311', '3.1.1']),
    start(PYTHON, [join(FIXTURES, 'paho_v5_plugin.py'), '--url', mosquitto.url, '--id', 'pahov5']),
    start(PYTHON, [join(REPO_ROOT, 'scripts', 'examples', 'python', 'weather_plugin.py'), '--url', mosquitto.url, '--id', 'paho311']),
  ];
  await Promise.all(plugins.map((plugin) => plugin.event('registered')));
}, 120_000);

afterAll(async () => {
  await Promise.all(processes.map((child) => child.stop()));
  await core?.cleanup();
  await mosquitto?.stop();
});

describe('MQTT 5 and 3.1.1 plugins on one broker, through the Core', () => {
  it('the Core speaks MQTT 5 to the broker; the plugins speak 5 and 3.1.1 as they chose', () => {
    const log = mosquitto.output();
    // Mosquitto logs each CONNECT as "(p<protocol>, c<clean>, k<keepalive>)": p5 is MQTT 5, p2 3.1.1.
    expect(log).toMatch(/as homeclaw-core-[0-9a-f]+ \(p5,/);
    expect(log).toMatch(/as homeclaw-plugin-sdk5 \(p5,/);
    expect(log).toMatch(/as paho-v5-pahov5 \(p5,/);
    expect(log).toMatch(/as homeclaw-plugin-sdk311 \(p2,/);
  });

  it('invokes all four and each answers', async () => {
    const results = await Promise.all([
      core.ctx.dispatcher.invoke({ plugin_id: 'sdk5', capability_id: 'echo', parameters: { text: 'one' } }),
      core.ctx.dispatcher.invoke({ plugin_id: 'sdk311', capability_id: 'echo', parameters: { text: 'two' } }),
      core.ctx.dispatcher.invoke({ plugin_id: 'pahov5', capability_id: 'echo', parameters: { text: 'three' } }),
      core.ctx.dispatcher.invoke({ plugin_id: 'paho311', capability_id: 'forecast', parameters: { city: 'Paris' } }),
    ]);
    for (const result of results) expect(result, JSON.stringify(result)).toMatchObject({ success: true });
    expect(results.map((r) => r.text?.split(':')[0])).toEqual(['sdk 5', 'sdk 3.1.1', 'paho v5', expect.stringContaining('Paris')]);
  });

  it('MQTT 5 plugins receive the time left to the deadline as message expiry and a traceparent named after the request', async () => {
    const started = Date.now();
    const paho = await core.ctx.dispatcher.invoke({ plugin_id: 'pahov5', capability_id: 'echo', parameters: { text: 'x' }, timeout_sec: 7 });
    const seen = paho.data as { expiry: number; traceparent: string; keys: string[] };
    expect(seen.expiry).toBeGreaterThanOrEqual(1);
    expect(seen.expiry).toBeLessThanOrEqual(7);
    const trace = parseTraceparent(seen.traceparent);
    expect(trace, seen.traceparent).toBeDefined();
    // A new trace named after the request id: both logs name the call the same way.
    expect(trace!.trace_id).toBe(paho.request_id.replace(/-/g, ''));

    const sdk = await core.ctx.dispatcher.invoke({ plugin_id: 'sdk5', capability_id: 'echo', parameters: { text: 'x' }, timeout_sec: 7 });
    const context = sdk.data as { traceparent: string; deadline: number; request_deadline: number };
    expect(parseTraceparent(context.traceparent)?.trace_id).toBe(sdk.request_id.replace(/-/g, ''));
    // The handler's deadline honours the expiry: never later than the request's deadline.
    expect(context.deadline).toBeLessThanOrEqual(context.request_deadline);
    expect(context.request_deadline).toBeGreaterThan(started);
  });

  it("a caller's traceparent (HTTP header) is passed through: same trace, a new span for the call", async () => {
    const caller = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    for (const pluginId of ['sdk5', 'pahov5']) {
      const result = await invokeOverHttp(pluginId, 'echo', { text: 'traced' }, { traceparent: caller });
      expect(result.success).toBe(true);
      const received = parseTraceparent((result.data as { traceparent: string }).traceparent);
      expect(received).toMatchObject({ trace_id: '4bf92f3577b34da6a3ce929d0e0e4736', flags: '01' });
      expect(received!.parent_id).not.toBe('00f067aa0ba902b7');
    }
    // An invalid header is ignored (W3C: start a new trace), not an error.
    const bad = await invokeOverHttp('sdk5', 'echo', { text: 'x' }, { traceparent: 'not-a-traceparent' });
    expect(parseTraceparent((bad.data as { traceparent: string }).traceparent)?.trace_id).toBe(bad.request_id.replace(/-/g, ''));
  });

  it('3.1.1 plugins get the same request with nothing MQTT 5 about it', async () => {
    const result = await core.ctx.dispatcher.invoke({ plugin_id: 'sdk311', capability_id: 'echo', parameters: { text: 'x' } });
    const context = result.data as { traceparent: string | null; deadline: number; request_deadline: number; keys: string[] };
    expect(context.traceparent).toBeNull();
    expect(context.deadline).toBe(context.request_deadline);
    expect(context.keys).toEqual(['capability_id', 'deadline', 'parameters', 'plugin_id', 'request_id']);
  });

  it('a call to a plugin nobody serves ends at once with offline (PUBACK: no matching subscribers), not at its deadline', async () => {
    const gone = start(process.execPath, [join(FIXTURES, 'sdk-plugin.mjs'), mosquitto.url, 'gone5', '5']);
    await gone.event('registered');
    gone.child.kill('SIGKILL'); // no goodbye: the broker publishes its will
    await gone.stop();
    await waitUntil(() => core.ctx.registry.get('gone5')?.state === 'offline', 'the will');
    // Let the Core believe it is still there, as when a plugin sets no will or the will is lost.
    core.ctx.registry.setState('gone5', 'online');
    const result = await core.ctx.dispatcher.invoke({ plugin_id: 'gone5', capability_id: 'echo', parameters: { text: 'x' }, timeout_sec: 30 });
    expect(result).toMatchObject({ success: false, error_code: 'offline' });
    expect(result.error).toMatch(
      /no client subscribes to homeclaw\/plugins\/invoke\/gone5 \(the broker answered No matching subscribers \(reason code 0x10\)\)/,
    );
  });
});

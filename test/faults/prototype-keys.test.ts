// Attack (JSON keys that JavaScript treats specially). JSON.parse keeps a "__proto__" key as data, but
// copying the object with Object.assign (as the dispatcher does to fill in defaults) turns it into the
// copy's prototype: its values are then inherited, not sent. A call over MQTT with
// `{"parameters": {"__proto__": {"name": "x"}}}` passed the Core's check of the required `name` (the
// check read the inherited value) and reached the plugin without it. A parameter named after a member of
// every JavaScript object ("constructor", "toString", "__proto__") was accepted at registration; such a
// parameter is "present" in every call, so its default was never filled in, and "__proto__" made the
// capability's schema uncompilable. Defence: JSON with a "__proto__" key at any depth is refused where it
// enters (MQTT payloads, as the HTTP parser already does, and parameters on every call path), and those
// names are reserved for parameters, each with an error that names the key.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import { connectPlugin, PluginRegistrationError, silentSdkLogger, type ConnectedPlugin } from '../../src/sdk/index.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { makePluginsDir } from '../e2e/helpers.js';

let core: TestCore;
let pluginsDir: string;
let plugin: ConnectedPlugin;
let client: ChildClient;
const received: Record<string, unknown>[] = [];

beforeAll(async () => {
  pluginsDir = makePluginsDir({ shipped: [] });
  core = await startTestCore({ pluginsDir });
  plugin = await connectPlugin({
    url: core.mqttUrl,
    log: silentSdkLogger(),
    descriptor: {
      id: 'greeter',
      name: 'Greeter',
      description: 'Greets someone by name.',
      capabilities: [
        {
          id: 'greet',
          description: 'Greet a person.',
          parameters: [
            { name: 'name', type: 'string', required: true },
            { name: 'greeting', type: 'string', default: 'hello' },
          ],
        },
      ],
    },
    handlers: {
      greet: (parameters) => {
        received.push(parameters);
        return `${String(parameters['greeting'])} ${String(parameters['name'])}`;
      },
    },
  });
  client = new ChildClient({ url: core.mqttUrl, clientId: 'proto-sender' });
  await client.connected();
  await client.subscribe(topics.callResultInvalid());
  await client.subscribe(topics.callResult('proto-2'));
}, 120_000);

afterAll(async () => {
  await client?.end();
  await plugin?.close();
  await core?.cleanup();
  rmSync(pluginsDir, { recursive: true, force: true });
});

describe('a "__proto__" key in JSON', () => {
  it("is refused over MQTT with the topic's error reply naming the key, and the plugin is not called", async () => {
    await client.publish(topics.call('greeter', 'greet'), '{"request_id":"proto-1","parameters":{"__proto__":{"name":"x"}}}');
    const refusal = JSON.parse((await client.message(topics.callResultInvalid())).payload ?? '{}') as Record<string, unknown>;
    expect(refusal).toMatchObject({ success: false, topic: topics.call('greeter', 'greet') });
    expect(String(refusal['error'])).toMatch(/"__proto__" key at \/parameters\/__proto__/);

    // Escaped in the text, it is the same key once parsed.
    await client.publish(topics.call('greeter', 'greet'), '{"request_id":"proto-3","parameters":{"name":"x","opts":{"\\u005f_proto__":{}}}}');
    const second = await client.waitFor((e) => e.event === 'message' && e.topic === topics.callResultInvalid() && (e.payload ?? '').includes('/opts/'));
    const escaped = JSON.parse(second.payload ?? '{}') as Record<string, unknown>;
    expect(String(escaped['error'])).toMatch(/"__proto__" key at \/parameters\/opts\/__proto__/);
    expect(received).toEqual([]);
    expect(plugin.stats()).toMatchObject({ invocations: 0, refused: 0 });

    // A key that merely contains the word is data like any other.
    await client.publish(topics.call('greeter', 'greet'), '{"request_id":"proto-2","parameters":{"name":"__proto__ fan"}}');
    const answer = JSON.parse((await client.message(topics.callResult('proto-2'))).payload ?? '{}') as Record<string, unknown>;
    expect(answer).toMatchObject({ success: true, text: 'hello __proto__ fan' });
  });

  it('is refused in parameters on every call path, before the plugin sees them', async () => {
    // The MCP server and the conversation's tool calls hand the dispatcher parameters parsed from JSON.
    const before = received.length;
    const result = await core.ctx.dispatcher.invoke({
      plugin_id: 'greeter',
      capability_id: 'greet',
      parameters: JSON.parse('{"__proto__":{"name":"x"}}') as Record<string, string>,
    });
    expect(result).toMatchObject({ success: false, error_code: 'invalid_params' });
    expect(result.error).toMatch(/"__proto__" key at \/__proto__ is refused/);
    // JSON.stringify writes a parsed "__proto__" key back out, so this body carries it.
    const http = await core.api<Record<string, unknown>>('POST', '/v1/plugins/greeter/tools/greet/run', JSON.parse('{"__proto__":{"name":"x"}}'));
    expect(http.status).toBe(400);
    expect(received.length).toBe(before);
  });
});

describe('a parameter named after a member of every JavaScript object', () => {
  for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    it(`"${name}" is refused at registration with a reason`, async () => {
      const attempt = connectPlugin({
        url: core.mqttUrl,
        log: silentSdkLogger(),
        descriptor: {
          id: `reserved-${name.replace(/_/g, '').toLowerCase()}`,
          name: 'Reserved',
          description: 'Declares a parameter with a reserved name.',
          capabilities: [{ id: 'run', description: 'Run it.', parameters: [{ name, type: 'string', default: 'x' }] }],
        },
        handlers: { run: () => 'ran' },
      });
      const error = await attempt.then(
        async (connected) => {
          await connected.close();
          return undefined;
        },
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(PluginRegistrationError);
      expect(JSON.stringify((error as PluginRegistrationError).errors)).toMatch(new RegExp(`parameter name \\\\"${name}\\\\" is reserved`));
    });
  }

  it('is refused by the Core too, for a plugin registering without the SDK', async () => {
    await client.subscribe(topics.registered('raw-reserved'));
    const register = {
      id: 'raw-reserved',
      name: 'Raw',
      description: 'Registers by hand.',
      epoch: 1,
      heartbeat_interval_sec: 30,
      capabilities: [{ id: 'run', description: 'Run it.', parameters: [{ name: '__proto__', type: 'object' }] }],
    };
    await client.publish(topics.register(), JSON.stringify(register));
    const ack = JSON.parse((await client.message(topics.registered('raw-reserved'))).payload ?? '{}') as Record<string, unknown>;
    expect(ack).toMatchObject({ plugin_id: 'raw-reserved', ok: false });
    expect(JSON.stringify(ack['errors'])).toMatch(/parameter name \\"__proto__\\" is reserved/);
    expect((await core.api('GET', '/api/plugins/raw-reserved')).status).toBe(404);
  });
});

// Attack (input nested thousands of levels deep): JSON.parse takes it, but everything that walks the
// value recursively afterwards overflows the stack. A body with 20,000 nested arrays made
// `POST /api/messages`, `PUT /api/profiles/:id` and `POST /api/credentials` answer 500 (the error
// formatter printing the offending value), and a call with deep parameters failed as "Maximum call stack
// size exceeded" (adapter_error, 502) once the MQTT adapter serialised it. Defence: JSON nested deeper
// than 64 levels is refused where it enters, over HTTP (400) and MQTT (the topic's error reply), and
// parameters deeper than 63 by the dispatcher (every path: a request carries them one level down), each
// naming the limit, before anything is stored or sent.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, MAX_PARAMETER_DEPTH } from '../../src/protocol/limits.js';
import { topics } from '../../src/protocol/topics.js';
import { connectPlugin, silentSdkLogger, type ConnectedPlugin } from '../../src/sdk/index.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { ChildClient } from '../fixtures/bus/child-client.js';
import { makePluginsDir } from '../e2e/helpers.js';

let core: TestCore;
let pluginsDir: string;
let plugin: ConnectedPlugin;
let client: ChildClient;

/** An object nested `depth` levels deep: depth 1 is {"a":1}. */
const deepObject = (depth: number): string => `${'{"a":'.repeat(depth - 1)}{"a":1}${'}'.repeat(depth - 1)}`;
const deepArray = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const TOO_DEEP = new RegExp(`nested deeper than ${MAX_JSON_DEPTH} levels`);

async function post(method: string, path: string, body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${core.httpUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${core.adminToken}`, 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  pluginsDir = makePluginsDir({ shipped: [] });
  core = await startTestCore({ pluginsDir });
  plugin = await connectPlugin({
    url: core.mqttUrl,
    log: silentSdkLogger(),
    descriptor: {
      id: 'keeper',
      name: 'Keeper',
      description: 'Keeps structured data.',
      capabilities: [{ id: 'keep', description: 'Keep the data.', parameters: [{ name: 'data', type: 'object' }] }],
    },
    handlers: { keep: () => 'kept' },
  });
  client = new ChildClient({ url: core.mqttUrl, clientId: 'deep-sender' });
  await client.connected();
  await client.subscribe(topics.callResultInvalid());
  await client.subscribe(topics.channelOut('web'));
}, 120_000);

afterAll(async () => {
  await client?.end();
  await plugin?.close();
  await core?.cleanup();
  rmSync(pluginsDir, { recursive: true, force: true });
});

describe(`JSON nested deeper than ${MAX_JSON_DEPTH} levels`, () => {
  it('is refused over HTTP with 400 naming the limit, and nothing is stored', async () => {
    const cases: [string, string, string][] = [
      ['POST', '/api/messages', `{"channel":"web","user_id":"alice","text":"hi","metadata":${deepArray(20_000)}}`],
      ['POST', '/api/messages', `{"channel":"web","user_id":"alice","text":"hi","metadata":${deepObject(20_000)}}`],
      ['PUT', '/api/profiles/alice', `{"pets":${deepArray(20_000)}}`],
      ['POST', '/api/credentials', `{"name":"deep","role":"plugin","plugin_ids":${deepArray(20_000)}}`],
      ['POST', '/v1/plugins/keeper/tools/keep/run', `{"data":${deepObject(20_000)}}`],
    ];
    for (const [method, path, body] of cases) {
      const answer = await post(method, path, body);
      expect(answer.status, `${method} ${path}`).toBe(400);
      expect(String(answer.body['message']), `${method} ${path}`).toMatch(TOO_DEEP);
    }
    expect((await core.api<Record<string, unknown>>('GET', '/api/profiles/alice')).body['pets']).toBeUndefined();
    expect((await core.api<{ credentials: { name: string }[] }>('GET', '/api/credentials')).body.credentials.map((c) => c.name)).not.toContain('deep');
  });

  it('is accepted up to the limit: a call with parameters nested to the last allowed level runs', async () => {
    // The body is the parameters object ({"data": ...}: one level); a request carries it one level down.
    const answer = await post('POST', '/v1/plugins/keeper/tools/keep/run', `{"data":${deepObject(MAX_PARAMETER_DEPTH - 1)}}`);
    expect(answer.body).toMatchObject({ success: true, text: 'kept' });
    const over = await post('POST', '/v1/plugins/keeper/tools/keep/run', `{"data":${deepObject(MAX_PARAMETER_DEPTH)}}`);
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ success: false, error_code: 'invalid_params' });
    expect(String(over.body['error'])).toMatch(new RegExp(`nested deeper than ${MAX_PARAMETER_DEPTH} levels`));
  });

  it('is refused over MQTT with an error reply naming the limit: a call, and a channel message', async () => {
    await client.publish(topics.call('keeper', 'keep'), `{"request_id":"deep-1","parameters":{"data":${deepObject(20_000)}}}`);
    const refusal = JSON.parse((await client.message(topics.callResultInvalid())).payload ?? '{}') as Record<string, unknown>;
    expect(refusal).toMatchObject({ success: false, topic: topics.call('keeper', 'keep') });
    expect(String(refusal['error'])).toMatch(TOO_DEEP);

    await client.publish(topics.channelIn('web'), `{"request_id":"m-1","user_id":"alice","text":"hi","metadata":${deepObject(20_000)}}`);
    const reply = JSON.parse((await client.message(topics.channelOut('web'))).payload ?? '{}') as Record<string, unknown>;
    expect(reply).toMatchObject({ kind: 'error' });
    expect(String(reply['text'])).toMatch(TOO_DEEP);
    expect(plugin.stats().invocations).toBe(1);
  });
});

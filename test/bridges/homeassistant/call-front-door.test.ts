// The MQTT front door on the real Core: calls on homeclaw/call/<plugin>/<capability> answered on
// homeclaw/call_result/<request_id> through the dispatcher, bad input answered there (or on
// call_result/_invalid) and logged; who may call on the embedded broker (anonymous on loopback, only
// the caller role with credentials) and on Mosquitto with the documented ACL; retained calls never run.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../../src/protocol/topics.js';
import type { CallRejection, PluginResult } from '../../../src/protocol/types.js';
import { validatePayload } from '../../../src/protocol/validate.js';
import { startTestCore, type TestCore } from '../../helpers/core.js';
import { startMosquitto, type MosquittoHandle } from '../../helpers/mosquitto.js';
import { connectTestClient, type TestClient } from '../../helpers/mqtt-client.js';
import { makePluginsDir, type TestBuiltin } from '../../e2e/helpers.js';
import { aclFromDocs } from '../../helpers/external-broker-docs.js';

/** Echoes what a plugin learns about the call: its parameters, user and channel. */
const WHOAMI: TestBuiltin = {
  id: 'whoami',
  manifest: `id: whoami
name: Who am I
description: Tells who asked.
capabilities:
  - id: tell
    name: Tell
    description: Tell who asked.
    parameters:
      - { name: note, type: string, required: false }
`,
  module: `export function tell(params, ctx) {
  return { text: 'asked by ' + (ctx.request.user_id ?? 'nobody') + ' on ' + ctx.request.channel_name, data: { params } };
}
`,
};

async function call(client: TestClient, plugin: string, capability: string, body: unknown, raw = false): Promise<PluginResult> {
  const requestId = typeof body === 'object' && body !== null ? String((body as { request_id?: unknown }).request_id) : '';
  await client.subscribe(topics.callResult(requestId));
  const waiting = client.waitFor(topics.callResult(requestId), () => true, 10_000);
  await client.publish(topics.call(plugin, capability), raw ? String(body) : JSON.stringify(body));
  const reply = (await waiting).json<PluginResult>();
  expect(validatePayload('call/result', reply).ok).toBe(true);
  return reply;
}

let pluginsDir: string;
beforeAll(() => {
  pluginsDir = makePluginsDir({ shipped: [{ id: 'time' }], builtins: [WHOAMI] });
});
afterAll(() => rmSync(pluginsDir, { recursive: true, force: true }));

describe('front door on the embedded broker (loopback: anonymous callers)', () => {
  let core: TestCore;
  let client: TestClient;

  beforeAll(async () => {
    core = await startTestCore({ pluginsDir });
    client = await connectTestClient(core.mqttUrl);
    await client.subscribe(topics.callResultInvalid());
  }, 30_000);
  afterAll(async () => {
    await client?.end(true);
    await core?.cleanup();
  });

  it('a call runs through the dispatcher and its PluginResult comes back under the caller request_id', async () => {
    const reply = await call(client, 'time', 'now', { request_id: 'ha-time-1', parameters: { timezone: 'UTC' } });
    expect(reply).toMatchObject({ request_id: 'ha-time-1', plugin_id: 'time', success: true });
    expect(reply.text).toMatch(/in UTC \(UTC\+00:00\)/);
    expect(reply.metadata?.invocation_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('user_id goes along in the invocation context, on the channel mqtt-call; parameters reach the plugin', async () => {
    const reply = await call(client, 'whoami', 'tell', { request_id: 'who-1', parameters: { note: 'hi' }, user_id: 'alice' });
    expect(reply).toMatchObject({ success: true, text: 'asked by alice on mqtt-call', data: { params: { note: 'hi' } } });
    const anonymous = await call(client, 'whoami', 'tell', { request_id: 'who-2' });
    expect(anonymous.text).toBe('asked by nobody on mqtt-call');
  });

  it('unknown plugin or capability: not_found on call_result', async () => {
    expect(await call(client, 'nosuch', 'run', { request_id: 'bad-plugin' })).toMatchObject({
      request_id: 'bad-plugin',
      success: false,
      error_code: 'not_found',
      plugin_id: 'nosuch',
    });
    const capability = await call(client, 'time', 'nosuch', { request_id: 'bad-cap' });
    expect(capability).toMatchObject({ success: false, error_code: 'not_found' });
    expect(capability.error).toContain('has no capability "nosuch"');
  });

  it('invalid parameters: invalid_params with every problem, and the plugin is not called', async () => {
    const before = core.ctx.dispatcher.getStats().succeeded;
    const reply = await call(client, 'time', 'now', { request_id: 'bad-params', parameters: { timezone: 42 } });
    expect(reply).toMatchObject({ success: false, error_code: 'invalid_params' });
    expect(reply.error).toContain('timezone');
    const shape = await call(client, 'time', 'now', { request_id: 'bad-shape', parameters: ['UTC'], extra: true });
    expect(shape).toMatchObject({ success: false, error_code: 'invalid_params' });
    expect(shape.metadata?.problems).toEqual(
      expect.arrayContaining([
        { path: '/parameters', message: 'must be object' },
        { path: '/extra', message: 'is not an allowed property' },
      ]),
    );
    expect(core.ctx.dispatcher.getStats().succeeded).toBe(before);
  });

  it('non-JSON or no readable request_id: answered on call_result/_invalid naming the topic', async () => {
    const cases: [string, string, RegExp][] = [
      ['{"request_id": "x", ', topics.call('time', 'now'), /not valid JSON/],
      ['[1, 2]', topics.call('time', 'now'), /must be a JSON object/],
      ['{"parameters": {}}', topics.call('time', 'now'), /request_id must be a string/],
      ['{"request_id": "_invalid"}', topics.call('whoami', 'tell'), /request_id must be a string/],
    ];
    for (const [payload, topic, error] of cases) {
      const mark = client.received.length;
      await client.publish(topic, payload);
      const rejection = (await client.waitFor(topics.callResultInvalid(), (m) => client.received.indexOf(m) >= mark)).json<CallRejection>();
      expect(validatePayload('call/invalid', rejection).ok).toBe(true);
      expect(rejection).toMatchObject({ topic, success: false, error_code: 'invalid_params' });
      expect(rejection.error).toMatch(error);
    }
    // And the door keeps working.
    expect((await call(client, 'time', 'now', { request_id: 'after-bad' })).success).toBe(true);
  });

  it('an oversized call is refused without parsing it', async () => {
    const mark = client.received.length;
    const big = JSON.stringify({ request_id: 'big', parameters: { note: 'x'.repeat(core.ctx.config.broker.max_payload_bytes) } });
    await client.publish(topics.call('whoami', 'tell'), big);
    const rejection = (await client.waitFor(topics.callResultInvalid(), (m) => client.received.indexOf(m) >= mark)).json<CallRejection>();
    expect(rejection.error).toMatch(/payload is \d+ bytes; the limit is/);
  });
});

describe('front door with credentials only (the LAN setting)', () => {
  let core: TestCore;
  const clients: TestClient[] = [];
  const login = async (name: string, role: 'caller' | 'channel' | 'plugin', users?: string[]): Promise<TestClient> => {
    const { password } = await core.ctx.credentials.add(name, role, users ? { users } : {});
    const client = await connectTestClient(core.mqttUrl, { username: name, password, clientId: `${name}-client` });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    core = await startTestCore({
      pluginsDir,
      overrides: { broker: { allow_anonymous: false }, policy: { users: { kid: { deny: ['whoami'] } }, require_confirmation: [] } },
    });
  }, 30_000);
  afterAll(async () => {
    for (const client of clients) await client.end(true);
    await core?.cleanup();
  });

  it('anonymous clients cannot connect; a caller calls and reads only its own result topic', async () => {
    await expect(connectTestClient(core.mqttUrl)).rejects.toThrow();
    const nodered = await login('nodered', 'caller');
    // Without --users a caller acts as the user named like its login.
    expect(await call(nodered, 'whoami', 'tell', { request_id: 'nr-1' })).toMatchObject({ success: true, text: 'asked by nodered on mqtt-call' });
    expect(await call(nodered, 'whoami', 'tell', { request_id: 'nr-2', user_id: 'nodered' })).toMatchObject({
      success: true,
      text: 'asked by nodered on mqtt-call',
    });
    // SUBACK 0x80: mqtt.js rejects the subscription.
    await expect(nodered.client.subscribeAsync('homeclaw/call_result/+', { qos: 1 })).rejects.toThrow(/Subscribe error/);
  });

  it('a caller login cannot act for a user it is not bound to: refused with forbidden, and nothing runs', async () => {
    const intruder = await login('scripts', 'caller');
    const before = core.ctx.dispatcher.getStats().invoked;
    const reply = await call(intruder, 'whoami', 'tell', { request_id: 'impersonate-1', user_id: 'alice' });
    expect(reply).toMatchObject({ request_id: 'impersonate-1', success: false, error_code: 'forbidden' });
    expect(reply.error).toContain('the caller login "scripts" may act only as "scripts", not as "alice"');
    expect(core.ctx.dispatcher.getStats().invoked).toBe(before);
  });

  it('a caller bound to several users names one of them; without user_id it is refused, never run without a user', async () => {
    const family = await login('family-scripts', 'caller', ['alice', 'bob']);
    expect(await call(family, 'whoami', 'tell', { request_id: 'fam-1', user_id: 'bob' })).toMatchObject({ success: true, text: 'asked by bob on mqtt-call' });
    const before = core.ctx.dispatcher.getStats().invoked;
    const unnamed = await call(family, 'whoami', 'tell', { request_id: 'fam-2' });
    expect(unnamed).toMatchObject({ success: false, error_code: 'forbidden' });
    expect(unnamed.error).toContain('acts for several users ("alice", "bob"): name one of them in user_id');
    expect((await call(family, 'whoami', 'tell', { request_id: 'fam-3', user_id: 'mallory' })).error).toContain(
      'may act only as "alice", "bob", not as "mallory"',
    );
    expect(core.ctx.dispatcher.getStats().invoked).toBe(before);
  });

  it("a caller bound to one user stays under that user's policy when it leaves user_id out", async () => {
    const kids = await login('kids-tablet', 'caller', ['kid']);
    const reply = await call(kids, 'whoami', 'tell', { request_id: 'kid-1' });
    expect(reply).toMatchObject({ success: false, error_code: 'forbidden' });
    expect(reply.error).toContain('user "kid" is not allowed to use whoami.tell');
  });

  it('a caller bound to "*" may name anyone, and without user_id runs without a user', async () => {
    const automations = await login('automations', 'caller', ['*']);
    expect(await call(automations, 'whoami', 'tell', { request_id: 'any-1', user_id: 'carol' })).toMatchObject({
      success: true,
      text: 'asked by carol on mqtt-call',
    });
    expect(await call(automations, 'whoami', 'tell', { request_id: 'any-2' })).toMatchObject({ success: true, text: 'asked by nobody on mqtt-call' });
  });

  it('caller bindings are listed with the credential and validated', async () => {
    expect(core.ctx.credentials.get('nodered')?.users).toEqual(['nodered']);
    await expect(core.ctx.credentials.add('empty-binding', 'caller', { users: [] })).rejects.toThrow(/at least one user/);
    await expect(core.ctx.credentials.add('plugin-with-users', 'plugin', { users: ['alice'] })).rejects.toThrow(/a plugin credential cannot have users/);
    const listed = await core.api<{ credentials: { name: string; users?: string[] }[] }>('GET', '/api/credentials');
    expect(listed.body.credentials.find((c) => c.name === 'family-scripts')?.users).toEqual(['alice', 'bob']);
  });

  it('channel and plugin logins cannot call: their calls are dropped and nothing runs', async () => {
    const watcher = await login('watcher', 'caller');
    await watcher.subscribe(topics.callResult('from-channel'));
    await watcher.subscribe(topics.callResult('from-plugin'));
    const before = core.ctx.dispatcher.getStats().invoked;
    const telegram = await login('telegram', 'channel');
    const weather = await login('weather', 'plugin');
    await telegram.publish(topics.call('whoami', 'tell'), { request_id: 'from-channel' });
    await weather.publish(topics.call('whoami', 'tell'), { request_id: 'from-plugin' });
    expect(await watcher.quiet('homeclaw/call_result/+', 500)).toBe(true);
    expect(core.ctx.dispatcher.getStats().invoked).toBe(before);
  });
});

describe('front door on Mosquitto with the documented ACL', () => {
  let mosquitto: MosquittoHandle;
  let core: TestCore;
  let early: TestClient;
  const clients: TestClient[] = [];
  const login = async (name: string): Promise<TestClient> => {
    const client = await connectTestClient(mosquitto.url, { username: name, password: `${name}-secret`, clientId: `${name}-client` });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    const users = ['homeclaw-core', 'automations', 'telegram', 'weather'];
    mosquitto = await startMosquitto({ users: Object.fromEntries(users.map((u) => [u, `${u}-secret`])), acl: aclFromDocs() });
    // A retained call left on the broker: replayed to the Core when it subscribes, it must not run.
    early = await login('automations');
    await early.subscribe(topics.callResult('retained-1'));
    await early.publish(topics.call('whoami', 'tell'), { request_id: 'retained-1', user_id: 'eve' }, { retain: true });
    core = await startTestCore({ pluginsDir, overrides: { broker: { url: mosquitto.url, username: 'homeclaw-core', password: 'homeclaw-core-secret' } } });
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) await client.end(true);
    await core?.cleanup();
    await mosquitto?.stop();
  });

  it('a retained call replayed at subscription never runs: the Core ignores it and clears it from the broker', async () => {
    // A command is acted on only when sent; a replay is logged, not answered (its caller may be long gone).
    expect(await early.quiet(topics.callResult('retained-1'), 500)).toBe(true);
    expect(core.ctx.dispatcher.getStats().invoked).toBe(0);
    const probe = await connectTestClient(mosquitto.url, { username: 'homeclaw-core', password: 'homeclaw-core-secret', clientId: 'retained-probe' });
    clients.push(probe);
    await probe.subscribe(topics.call('whoami', 'tell'));
    expect(await probe.quiet(topics.call('whoami', 'tell'), 500)).toBe(true);
  });

  it('a caller user calls and gets the result', async () => {
    const automations = await login('automations');
    expect(await call(automations, 'time', 'now', { request_id: 'ext-1', parameters: { timezone: 'UTC' } })).toMatchObject({
      request_id: 'ext-1',
      success: true,
    });
  });

  it('the Core cannot tell external callers apart: they act as "household" unless access.callers.users says otherwise', async () => {
    const automations = await login('automations');
    expect(await call(automations, 'whoami', 'tell', { request_id: 'ext-who-1' })).toMatchObject({ success: true, text: 'asked by household on mqtt-call' });
    const before = core.ctx.dispatcher.getStats().invoked;
    const impersonation = await call(automations, 'whoami', 'tell', { request_id: 'ext-who-2', user_id: 'alice' });
    expect(impersonation).toMatchObject({ success: false, error_code: 'forbidden' });
    expect(impersonation.error).toContain('callers on the external broker may act only as "household", not as "alice"; bind users in access.callers.users');
    expect(core.ctx.dispatcher.getStats().invoked).toBe(before);
  });

  it('channel and plugin users cannot call', async () => {
    const automations = await login('automations');
    await automations.subscribe(topics.callResult('ext-channel'));
    await automations.subscribe(topics.callResult('ext-plugin'));
    const before = core.ctx.dispatcher.getStats().invoked;
    await (await login('telegram')).publish(topics.call('whoami', 'tell'), { request_id: 'ext-channel' });
    await (await login('weather')).publish(topics.call('whoami', 'tell'), { request_id: 'ext-plugin' });
    expect(await automations.quiet('homeclaw/call_result/+', 500)).toBe(true);
    expect(core.ctx.dispatcher.getStats().invoked).toBe(before);
  });
});

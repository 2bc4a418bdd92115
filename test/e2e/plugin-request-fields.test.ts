// Every PluginRequest field (topics/schemas/plugin-request.schema.json) reaches the plugin on every transport, on the real Core:
// a user on an MQTT channel calls an MQTT plugin (another process's client), an HTTP plugin, a
// subprocess, an MCP server in the single-tool form (found without config) and a built-in; each reports
// the request it got. Direct calls (HTTP run route, MCP) carry what they know and invent nothing.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { PluginRequest, PluginResult } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { FIXTURES } from '../fixtures/mcp/harness.js';
import { channelUser, makePluginsDir, type ChannelUser } from './helpers.js';

const SINGLE_TOOL_SERVER = join(FIXTURES, 'single-tool-server.mjs');

let core: TestCore;
let plugin: TestClient;
let user: TestClient;
let alice: ChannelUser;
let httpServer: Server;
let work: string;
const got: Record<string, PluginRequest> = {};

const manifest = (id: string, type: string, config: Record<string, unknown> = {}): Record<string, unknown> => ({
  id,
  name: `Echo ${type}`,
  description: `Reports the request it got, over ${type}.`,
  type,
  ...(type === 'http' ? { health_check_url: `${String(config['base_url'])}/health` } : {}),
  config,
});

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'homeclaw-request-fields-'));
  httpServer = createServer((req, res) => {
    if (req.method === 'GET') return void res.end('ok');
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got['echo-http'] = JSON.parse(body) as PluginRequest;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: true, text: 'http ok' }));
    });
  });
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', () => resolve()));
  const httpBase = `http://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
  writeFileSync(
    join(work, 'echo.mjs'),
    `import { writeFileSync } from 'node:fs';
let input = '';
process.stdin.on('data', (c) => (input += c));
process.stdin.on('end', () => { writeFileSync(process.argv[2], input); process.stdout.write(JSON.stringify({ success: true, text: 'subprocess ok' })); });
`,
  );
  const pluginsDir = makePluginsDir({
    builtins: [
      {
        id: 'echo-inline',
        manifest: 'id: echo-inline\nname: Echo inline\ndescription: Reports the request it got, in process.\n',
        module:
          'import { writeFileSync } from "node:fs";\nimport { join } from "node:path";\n' +
          'export function run(params, ctx) { writeFileSync(join(ctx.data_dir, "request.json"), JSON.stringify(ctx.request)); return "inline ok"; }\n',
      },
    ],
  });
  core = await startTestCore({ pluginsDir });
  for (const body of [
    manifest('echo-http', 'http', { base_url: httpBase }),
    manifest('echo-sub', 'subprocess', { command: process.execPath, args: [join(work, 'echo.mjs'), join(work, 'sub-request.json')] }),
    manifest('echo-mcp', 'mcp', { command: process.execPath, args: [SINGLE_TOOL_SERVER] }),
  ]) {
    const res = await core.api('POST', '/api/plugins/register', body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
  // The MQTT plugin: a raw client answering from what it received.
  plugin = await connectTestClient(core.mqttUrl, { clientId: 'echo-mqtt-plugin' });
  await plugin.subscribe(topics.invoke('echo-mqtt'));
  await plugin.subscribe(topics.registered('echo-mqtt'));
  plugin.client.on('message', (topic, payload) => {
    if (topic !== topics.invoke('echo-mqtt')) return;
    const request = JSON.parse(payload.toString()) as PluginRequest;
    got['echo-mqtt'] = request;
    void plugin.publish(topics.result(request.request_id), { request_id: request.request_id, plugin_id: 'echo-mqtt', success: true, text: 'mqtt ok' });
  });
  await plugin.publish(topics.register(), { ...manifest('echo-mqtt', 'mqtt'), epoch: 1 });
  expect((await plugin.waitFor(topics.registered('echo-mqtt'))).json()).toMatchObject({ ok: true });
  const start = Date.now();
  while (core.ctx.registry.get('echo-mcp')?.state !== 'online') {
    if (Date.now() - start > 20_000) throw new Error('the MCP plugin did not come online');
    await new Promise((r) => setTimeout(r, 50));
  }
  user = await connectTestClient(core.mqttUrl, { clientId: 'alice-phone' });
  await user.subscribe(topics.channelOut('telegram'));
  alice = channelUser(user, 'telegram', 'alice', 'chat-42');
}, 60_000);

afterAll(async () => {
  await user?.end();
  await plugin?.end();
  await core?.cleanup();
  httpServer?.closeAllConnections();
  await new Promise((r) => httpServer?.close(r));
});

const FROM_CHANNEL = { user_name: 'Alice', channel_type: 'IM', metadata: { telegram_chat: 42 } };

describe('conversation path: every field on every transport', () => {
  it('an MCP server whose only tool is handle_request is the single-tool form without config', () => {
    const record = core.ctx.registry.get('echo-mcp')!;
    expect(record.descriptor.config['tool']).toBeUndefined();
    expect(record.descriptor.capabilities.map((c) => c.id)).toEqual(['handle_request']);
  });

  it('sends request, user, channel, app, session, chat context and metadata', async () => {
    // A first turn gives the session a history: the calls below carry it as chat_context.
    expect((await alice.say('/help', FROM_CHANNEL)).kind).toBe('answer');
    const replies: Record<string, string> = {};
    for (const id of ['echo-mqtt', 'echo-http', 'echo-sub', 'echo-inline']) {
      const capability = 'run';
      replies[id] = (await alice.say(`/${id} ${capability}`, FROM_CHANNEL)).text;
    }
    const mcpReply = await alice.say('/echo-mcp handle_request', FROM_CHANNEL);
    expect(replies).toEqual({ 'echo-mqtt': 'mqtt ok', 'echo-http': 'http ok', 'echo-sub': 'subprocess ok', 'echo-inline': 'inline ok' });

    got['echo-sub'] = JSON.parse(readFileSync(join(work, 'sub-request.json'), 'utf8')) as PluginRequest;
    got['echo-inline'] = JSON.parse(readFileSync(join(core.dataDir, 'plugins', 'echo-inline', 'request.json'), 'utf8')) as PluginRequest;
    // The MCP tool declares one object property: it got {request: PluginRequest} and echoed it.
    got['echo-mcp'] = (JSON.parse(mcpReply.text) as { request: PluginRequest }).request;

    for (const id of ['echo-mqtt', 'echo-http', 'echo-sub', 'echo-inline', 'echo-mcp']) {
      const request = got[id]!;
      expect(request, id).toMatchObject({
        request_id: expect.any(String),
        plugin_id: id,
        capability_id: id === 'echo-mcp' ? 'handle_request' : 'run',
        parameters: {},
        deadline: expect.any(Number),
        user_input: `/${id} ${id === 'echo-mcp' ? 'handle_request' : 'run'}`,
        user_id: 'alice',
        user_name: 'Alice',
        channel_name: 'telegram',
        channel_type: 'IM',
        app_id: 'homeclaw',
        session_id: 'chat-42',
        metadata: { telegram_chat: 42 },
      });
      expect(request.chat_context, id).toMatch(/^user: \/help\nassistant: Commands:/);
    }
  });
});

describe('direct calls carry what they know and invent nothing', () => {
  it('HTTP run route: channel http, app id, the user_input parameter at the top level; no user, session or context', async () => {
    const res = await core.api<PluginResult>('POST', '/v1/plugins/echo-http/tools/run/run', { user_input: 'what is up' });
    expect(res.status).toBe(200);
    const request = got['echo-http']!;
    expect(request).toMatchObject({
      channel_name: 'http',
      channel_type: 'http',
      app_id: 'homeclaw',
      user_input: 'what is up',
      parameters: { user_input: 'what is up' },
    });
    for (const absent of ['user_id', 'user_name', 'session_id', 'chat_context', 'metadata']) expect(request, absent).not.toHaveProperty(absent);
  });

  it('MCP clients of the Core: channel mcp with the MCP session id', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${core.httpUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${core.adminToken}` } },
    });
    const client = new Client({ name: 'fields-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: 'echo-mqtt__run', arguments: {} });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const request = got['echo-mqtt']!;
    expect(request).toMatchObject({ channel_name: 'mcp', channel_type: 'mcp', app_id: 'homeclaw', session_id: expect.any(String) });
    for (const absent of ['user_input', 'user_id', 'chat_context', 'metadata']) expect(request, absent).not.toHaveProperty(absent);
  });

  it('a channel message that names no channel kind gets its front door kind (mqtt), and no metadata', async () => {
    const reply = await alice.say('/echo-mqtt run', {});
    expect(reply.text).toBe('mqtt ok');
    expect(got['echo-mqtt']).toMatchObject({ channel_type: 'mqtt', channel_name: 'telegram' });
    expect(got['echo-mqtt']).not.toHaveProperty('metadata');
  });
});

// Attack: any household member could reach every plugin (a child unlocking the front door). Defence: a
// per-user policy (`policy.users.<id>.allow|deny`, deny wins) enforced by the dispatcher for every path —
// conversation over MQTT and HTTP, and MCP with a user token — answered with `forbidden` and never sent
// to the plugin; retrieval does not offer the user plugins they may not reach.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { ChannelMessageOut } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { startScriptedLlm, systemPromptOf, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { channelUser, ensureBuilt, makePluginsDir } from '../e2e/helpers.js';
import { callApi, mcpClient, startLockServer, type LockServer } from './identity-helpers.js';

let core: TestCore;
let lock: LockServer;
let llm: ScriptedLlm;
let client: TestClient;
let kidToken: string;

beforeAll(async () => {
  await ensureBuilt();
  lock = await startLockServer('lock');
  llm = await startScriptedLlm();
  core = await startTestCore({
    pluginsDir: makePluginsDir({ shipped: [{ id: 'time' }] }),
    overrides: {
      llm: { base_url: llm.url, model: 'scripted', api_key: 'k' },
      policy: {
        users: {
          kid: { deny: ['lock'] },
          guest: { allow: ['time'] },
          teen: { allow: ['lock', 'time'], deny: ['lock.unlock'] },
        },
      },
    },
  });
  expect((await core.api('POST', '/api/plugins/register', lock.descriptor({ requiresConfirmation: false }))).status).toBe(201);
  kidToken = (await core.api<{ token: string }>('POST', '/api/users', { user_id: 'kid' })).body.token;
  client = await connectTestClient(core.mqttUrl);
  await client.subscribe(topics.channelOut('home'));
}, 120_000);

afterAll(async () => {
  await client?.end(true);
  await core?.cleanup();
  await lock?.close();
  await llm?.close();
});

describe('policy: who may reach which plugin', () => {
  it('conversation (slash command): a denied call is forbidden, never sent, no question asked', async () => {
    const reply = await channelUser(client, 'home', 'kid').say('/lock unlock door=front');
    expect(reply).toMatchObject({ kind: 'error', plugin_id: 'lock' });
    expect(reply.text).toMatch(/not allowed/);
    expect(lock.requests).toEqual([]);
    expect(core.ctx.pendingCalls.get({ channel: 'home', user_id: 'kid', session_id: 'default' })).toBeUndefined();
  });

  it('conversation (LLM): the denied plugin is not in the prompt, and a model that names it anyway is refused', async () => {
    llm.requests.length = 0;
    llm.push({ tool_calls: [{ name: 'route_to_plugin', arguments: { plugin_id: 'lock', capability_id: 'unlock' } }] });
    const reply = await channelUser(client, 'home', 'kid').say('unlock the front door');
    expect(systemPromptOf(llm.requests[0]!)).not.toContain('lock');
    expect(reply.kind).toBe('error');
    expect(reply.text).toMatch(/not allowed/);
    expect(lock.requests).toEqual([]);

    llm.requests.length = 0;
    llm.push({ text: 'ok' });
    await channelUser(client, 'home', 'alice').say('unlock the front door');
    expect(systemPromptOf(llm.requests[0]!)).toContain('### lock');
  });

  it('find_plugins does not offer denied plugins either', async () => {
    llm.requests.length = 0;
    llm.push({ tool_calls: [{ name: 'find_plugins', arguments: { query: 'unlock door' } }] }, { text: 'done' });
    await channelUser(client, 'home', 'kid').say('anything for doors?');
    const toolMessage = llm.requests[1]!.messages.find((m) => m.role === 'tool');
    expect(String(toolMessage?.content)).not.toContain('### lock');
  });

  it('allow only: a guest reaches time and nothing else; deny wins over allow', async () => {
    expect((await channelUser(client, 'home', 'guest').say('/time now timezone=UTC')).kind).toBe('answer');
    expect((await channelUser(client, 'home', 'guest').say('/lock status')).text).toMatch(/not allowed/);
    expect((await channelUser(client, 'home', 'teen').say('/lock status')).kind).toBe('answer');
    expect((await channelUser(client, 'home', 'teen').say('/lock unlock')).text).toMatch(/not allowed/);
    expect(lock.requests.map((r) => `${r.user_id}:${r.capability_id}`)).toEqual(['teen:status']);
  });

  it('HTTP: POST /api/messages with the user token is held to the same policy; search hides the plugin', async () => {
    lock.requests.length = 0;
    const res = await callApi<ChannelMessageOut>(core.httpUrl, kidToken, 'POST', '/api/messages', { channel: 'web', text: '/lock unlock' });
    expect(res.status).toBe(200);
    expect(res.body.kind).toBe('error');
    expect(res.body.text).toMatch(/not allowed/);
    const search = await callApi<{ hits: { plugin_id: string }[] }>(core.httpUrl, kidToken, 'GET', '/api/plugins/search?q=unlock%20the%20door');
    expect(search.status).toBe(200);
    expect(search.body.hits.map((h) => h.plugin_id)).not.toContain('lock');
    const adminSearch = await core.api<{ hits: { plugin_id: string }[] }>('GET', '/api/plugins/search?q=unlock%20the%20door');
    expect(adminSearch.body.hits.map((h) => h.plugin_id)).toContain('lock');
    expect(lock.requests).toEqual([]);
  });

  it('MCP with the user token: the denied tools are not listed, and calling one is forbidden', async () => {
    const mcp = await mcpClient(core.httpUrl, kidToken);
    try {
      const names = (await mcp.listTools()).tools.map((t) => t.name);
      expect(names).toContain('time__now');
      expect(names.filter((n) => n.startsWith('lock__'))).toEqual([]);
      const refused = await mcp.callTool({ name: 'lock__unlock', arguments: {} });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('forbidden');
      expect(lock.requests).toEqual([]);
    } finally {
      await mcp.close();
    }
  });

  it('every refusal is in the audit log as forbidden', async () => {
    await core.ctx.audit.flush();
    const entries = core.ctx.audit.query({ user: 'kid', limit: 100 });
    expect(entries.filter((e) => e.plugin_id === 'lock').every((e) => e.outcome === 'forbidden')).toBe(true);
    expect(
      entries
        .filter((e) => e.plugin_id === 'lock')
        .map((e) => e.channel)
        .sort(),
    ).toEqual(['home', 'home', 'mcp', 'web']);
  });
});

// Attack: a capability that unlocks a door ran as soon as a model (or a script) asked for it. Defence: a
// capability with `requires_confirmation: true` (or matched by `policy.require_confirmation`) is
// confirmed by the user in conversation whatever the LLM says, and direct invokes (HTTP run route, MCP
// tools/call, `homeclaw invoke --confirm`) need "confirmed": true; without it the plugin is sent nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topics } from '../../src/protocol/topics.js';
import type { PluginResult } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { channelUser, ensureBuilt } from '../e2e/helpers.js';
import { homeclaw, mcpClient, startLockServer, type LockServer } from './identity-helpers.js';

let core: TestCore;
let lock: LockServer;
let garage: LockServer;
let llm: ScriptedLlm;
let client: TestClient;

beforeAll(async () => {
  await ensureBuilt();
  lock = await startLockServer('lock');
  garage = await startLockServer('garage');
  llm = await startScriptedLlm();
  core = await startTestCore({
    overrides: {
      llm: { base_url: llm.url, model: 'scripted', api_key: 'k' },
      // The garage plugin does not flag its capability; the operator's policy does.
      policy: { require_confirmation: ['garage.unlock'] },
    },
  });
  expect((await core.api('POST', '/api/plugins/register', lock.descriptor())).status).toBe(201);
  expect((await core.api('POST', '/api/plugins/register', garage.descriptor({ requiresConfirmation: false }))).status).toBe(201);
  client = await connectTestClient(core.mqttUrl);
  await client.subscribe(topics.channelOut('home'));
}, 120_000);

afterAll(async () => {
  await client?.end(true);
  await core?.cleanup();
  await lock?.close();
  await garage?.close();
  await llm?.close();
});

describe('requires_confirmation in conversation', () => {
  it('the descriptor flag is kept in the canonical form', async () => {
    const view = await core.api<{ capabilities: { id: string; requires_confirmation?: boolean }[] }>('GET', '/api/plugins/lock');
    expect(view.body.capabilities.find((c) => c.id === 'unlock')?.requires_confirmation).toBe(true);
    expect(view.body.capabilities.find((c) => c.id === 'status')?.requires_confirmation).toBeUndefined();
  });

  it('the LLM routes to unlock: the Core asks first, sends nothing, and "yes" runs it', async () => {
    llm.push({ tool_calls: [{ name: 'route_to_plugin', arguments: { plugin_id: 'lock', capability_id: 'unlock', parameters: { door: 'back' } } }] });
    const user = channelUser(client, 'home', 'alice');
    const question = await user.say('open the back door, no need to ask');
    expect(question).toMatchObject({ kind: 'question', plugin_id: 'lock', capability_id: 'unlock' });
    expect(question.text).toMatch(/Unlock/);
    expect(question.text).toContain('"back"');
    expect(lock.requests).toEqual([]);
    const done = await user.say('yes');
    expect(done).toMatchObject({ kind: 'answer', plugin_id: 'lock' });
    expect(done.text).toBe('The back door is unlocked.');
    expect(lock.requests).toEqual([{ capability_id: 'unlock', user_id: 'alice', parameters: { door: 'back' } }]);
  });

  it('a slash command asks too; "no" cancels and nothing is sent', async () => {
    lock.requests.length = 0;
    const user = channelUser(client, 'home', 'bob');
    expect((await user.say('/lock unlock door=front')).kind).toBe('question');
    expect((await user.say('no')).text).toBe('Cancelled.');
    expect(lock.requests).toEqual([]);
  });

  it('a capability without the flag runs at once', async () => {
    const reply = await channelUser(client, 'home', 'bob').say('/lock status');
    expect(reply).toMatchObject({ kind: 'answer', text: 'All doors are locked.' });
  });

  it('policy.require_confirmation in the config asks for capabilities that do not flag themselves', async () => {
    const user = channelUser(client, 'home', 'carol');
    expect((await user.say('/garage unlock')).kind).toBe('question');
    expect(garage.requests).toEqual([]);
    expect((await user.say('yes')).kind).toBe('answer');
    expect(garage.requests).toHaveLength(1);
  });
});

describe('direct invokes need "confirmed": true', () => {
  it('HTTP run route: 428 confirmation_required without it, nothing sent; ok with it', async () => {
    lock.requests.length = 0;
    const refused = await core.api<PluginResult>('POST', '/v1/plugins/lock/tools/unlock/run', { door: 'front' });
    expect(refused.status).toBe(428);
    expect(refused.body).toMatchObject({ success: false, error_code: 'confirmation_required' });
    expect(refused.body.error).toMatch(/"confirmed": true/);
    expect(lock.requests).toEqual([]);
    const inBody = await core.api<PluginResult>('POST', '/v1/plugins/lock/tools/unlock/run', { door: 'front', confirmed: true });
    expect(inBody.status).toBe(200);
    const inQuery = await core.api<PluginResult>('POST', '/v1/plugins/lock/tools/unlock/run?confirmed=true', { door: 'side' });
    expect(inQuery.status).toBe(200);
    expect(lock.requests.map((r) => r.parameters)).toEqual([{ door: 'front' }, { door: 'side' }]);
    const badFlag = await core.api<PluginResult>('POST', '/v1/plugins/lock/tools/unlock/run?confirmed=maybe', {});
    expect(badFlag.status).toBe(400);
    expect(lock.requests).toHaveLength(2);
  });

  it('MCP tools/call: an error without confirmed, success with it', async () => {
    lock.requests.length = 0;
    const mcp = await mcpClient(core.httpUrl, core.adminToken);
    try {
      const tool = (await mcp.listTools()).tools.find((t) => t.name === 'lock__unlock');
      expect(tool?.annotations?.destructiveHint).toBe(true);
      expect(JSON.stringify(tool?.inputSchema)).toContain('confirmed');
      const refused = await mcp.callTool({ name: 'lock__unlock', arguments: { door: 'front' } });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('confirmation_required');
      expect(lock.requests).toEqual([]);
      const ok = await mcp.callTool({ name: 'lock__unlock', arguments: { door: 'front', confirmed: true } });
      expect(ok.isError).toBeFalsy();
      expect(lock.requests).toEqual([{ capability_id: 'unlock', parameters: { door: 'front' } }]);
    } finally {
      await mcp.close();
    }
  });

  it('CLI: `homeclaw invoke` fails with a hint, `--confirm` runs it', async () => {
    lock.requests.length = 0;
    const env = { HOMECLAW_URL: core.httpUrl, HOMECLAW_ADMIN_TOKEN: core.adminToken };
    const refused = await homeclaw(['invoke', 'lock', 'unlock', 'door=garden'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/confirmation_required.*--confirm/s);
    expect(lock.requests).toEqual([]);
    const confirmed = await homeclaw(['invoke', 'lock', 'unlock', 'door=garden', '--confirm'], env);
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(confirmed.stdout).toContain('The garden door is unlocked.');
  });
});

describe('a bad requires_confirmation value is refused with the descriptor errors', () => {
  it('400 with the path, nothing registered', async () => {
    const bad = lock.descriptor() as { id: string; capabilities: Record<string, unknown>[] };
    bad.id = 'badlock';
    bad.capabilities[0]!.requires_confirmation = 'yes';
    const res = await core.api<{ problems: { path: string }[] }>('POST', '/api/plugins/register', bad);
    expect(res.status).toBe(400);
    expect(res.body.problems.map((p) => p.path)).toContain('/capabilities/0/requires_confirmation');
    expect(core.ctx.registry.get('badlock')).toBeUndefined();
  });
});

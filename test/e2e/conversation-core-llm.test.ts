// The conversation end to end on the REAL Core with the scripted OpenAI-compatible server (through the real
// `openai` client): the parameter dialogue's flows through the real resolver, dispatcher and buy plugin, cancel,
// TTL expiry, post-processing, LLM down, plugin timeout/error, two users with a slow plugin, what the
// model was shown, and bad input. Everything over the MQTT channel topics unless said otherwise.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOrders } from '../../plugins/buy/index.js';
import { topics } from '../../src/protocol/topics.js';
import type { ChannelMessageOut } from '../../src/protocol/types.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { connectTestClient, type TestClient } from '../helpers/mqtt-client.js';
import { freePort } from '../helpers/ports.js';
import { startScriptedLlm, systemPromptOf, type ChatRequestBody, type ScriptedLlm, type ScriptedResponse } from '../helpers/scripted-llm.js';
import { channelUser, ensureBuilt, makePluginsDir, type TestBuiltin } from './helpers.js';

const CHANNEL = 'e2e';

const SLOW: TestBuiltin = {
  id: 'slow',
  manifest: `id: slow
name: Slow Report
description: Builds the quarterly report slowly.
type: inline
capabilities:
  - id: report
    name: Report
    description: Build the quarterly report.
    post_process: false
    parameters:
      - name: ms
        type: integer
        required: false
        default: 2000
`,
  module: `export async function report(params) {
  await new Promise((r) => setTimeout(r, params.ms));
  return 'Report ready after ' + params.ms + ' ms.';
}
`,
};

const SLEEPY: TestBuiltin = {
  id: 'sleepy',
  manifest: `id: sleepy
name: Sleepy Lamp
description: Dims the bedroom lamp, but never answers in time.
type: inline
capabilities:
  - id: dim
    name: Dim
    description: Dim the lamp.
    post_process: false
    parameters: []
`,
  module: `export async function dim(_params, ctx) {
  await new Promise((r) => { const t = setTimeout(r, 10000); ctx.signal.addEventListener('abort', () => { clearTimeout(t); r(); }); });
  return 'dimmed';
}
`,
  config: 'timeout_sec: 1\n',
};

const BROKEN: TestBuiltin = {
  id: 'broken',
  manifest: `id: broken
name: Broken Garage
description: Opens the garage door.
type: inline
capabilities:
  - id: open
    name: Open
    description: Open the garage door.
    post_process: true
    parameters: []
`,
  module: `export function open() { throw new Error('door motor jammed'); }
`,
};

const FORTUNE: TestBuiltin = {
  id: 'fortune',
  manifest: `id: fortune
name: Fortune Teller
description: Tells a fortune cookie saying.
type: inline
capabilities:
  - id: tell
    name: Tell
    description: Tell a fortune.
    post_process: true
    post_process_prompt: Make the fortune sound mysterious.
    parameters: []
`,
  module: `export function tell() { return 'RAW FORTUNE: you will write tests.'; }
`,
};

/** The shipped buy plugin with presets trusted directly (use_defaults_directly). */
const PRESET_BUY_CONFIG = `timeout_sec: 10
default_parameters:
  address: "123 Main St"
  contact_name: "John"
  phone: "555-0000"
use_defaults_directly: true
`;

function route(pluginId: string, parameters?: Record<string, unknown>, capabilityId?: string): ScriptedResponse {
  return {
    tool_calls: [
      {
        name: 'route_to_plugin',
        arguments: { plugin_id: pluginId, ...(capabilityId ? { capability_id: capabilityId } : {}), ...(parameters ? { parameters } : {}) },
      },
    ],
  };
}

function lastUserText(request: ChatRequestBody): string {
  const users = request.messages.filter((m) => m.role === 'user');
  const content = users[users.length - 1]?.content;
  return typeof content === 'string' ? content : '';
}

function isPostProcess(request: ChatRequestBody): boolean {
  return !request.tools || request.tools.length === 0;
}

/**
 * The model: decides from the user's words (like a real one would), so tests in parallel sessions do not
 * depend on a shared queue. Post-processing calls (no tools) answer "POLISHED: <prompt>".
 */
function scriptedModel(request: ChatRequestBody): ScriptedResponse {
  if (isPostProcess(request)) {
    if (lastUserText(request).includes('FAIL POST')) return { status: 500 };
    return { text: `POLISHED (${systemPromptOf(request)})` };
  }
  const last = request.messages[request.messages.length - 1]!;
  if (lastUserText(request).includes('loop')) return { tool_calls: [{ name: 'find_plugins', arguments: { query: 'anything at all' } }] };
  if (last.role === 'tool') return { text: `model saw tool result: ${String(last.content)}` };
  const text = lastUserText(request).toLowerCase();
  if (text.startsWith('buy')) return route('buy', { item: text.replace(/^buy (me )?(some )?/, '') });
  if (text.includes('report')) return route('slow', { ms: 2000 });
  if (text.includes('quick time')) return route('time', { timezone: 'UTC' }, 'now');
  if (text.includes('time')) return route('time');
  if (text.includes('lamp')) return route('sleepy');
  if (text.includes('garage')) return route('broken');
  if (text.includes('fortune')) return route('fortune');
  if (text.includes('unknown plugin')) return route('nosuch');
  if (text.includes('unknown capability')) return route('time', {}, 'nosuch');
  if (text.includes('malformed')) return { tool_calls: [{ name: 'route_to_plugin', arguments: '{"plugin_id": "time", ' }] };
  if (text.includes('loop')) return { tool_calls: [{ name: 'find_plugins', arguments: { query: 'anything at all' } }] };
  return { text: `Yes to what? (${text})` };
}

let llm: ScriptedLlm;
let core: TestCore;
let client: TestClient;
let pluginsDir: string;

beforeAll(async () => {
  await ensureBuilt();
  llm = await startScriptedLlm({ respond: scriptedModel });
  pluginsDir = makePluginsDir({ shipped: [{ id: 'buy' }, { id: 'time' }], builtins: [SLOW, SLEEPY, BROKEN, FORTUNE] });
  core = await startTestCore({ pluginsDir, overrides: { llm: { base_url: llm.url, model: 'scripted', max_rounds: 3 } } });
  client = await connectTestClient(core.mqttUrl);
  await client.subscribe(topics.channelOut(CHANNEL));
}, 120_000);

afterAll(async () => {
  await client?.end(true);
  await core?.cleanup();
  await llm?.close();
  rmSync(pluginsDir, { recursive: true, force: true });
});

const ordersOf = (c: TestCore, user: string) => listOrders(join(c.dataDir, 'plugins', 'buy')).filter((o) => o.user_id === user);

async function setProfile(c: TestCore, user: string, values: Record<string, string>): Promise<void> {
  expect((await c.api('POST', `/api/profiles/${user}`, { set: values })).status).toBe(200);
}

/** Requests the model received for one user message (by its text), for assertions. */
function requestsFor(text: string): ChatRequestBody[] {
  return llm.requests.filter((r) => lastUserText(r) === text);
}

describe('parameter dialogue flows with the scripted LLM on the real Core', () => {
  it('loads the built-ins of the temp plugins folder', () => {
    expect(
      core.ctx.registry
        .list()
        .map((r) => r.descriptor.id)
        .sort(),
    ).toEqual(['broken', 'buy', 'fortune', 'sleepy', 'slow', 'time']);
  });

  it('preset config with use_defaults_directly places the order at once; preset parameters are hidden from the model', async () => {
    const presetLlm = await startScriptedLlm({ respond: scriptedModel });
    const presetDir = makePluginsDir({ shipped: [{ id: 'buy', config: PRESET_BUY_CONFIG }] });
    const preset = await startTestCore({ pluginsDir: presetDir, overrides: { llm: { base_url: presetLlm.url, model: 'scripted' } } });
    try {
      const reply = await preset.api<ChannelMessageOut>('POST', '/api/messages', { channel: 'web', user_id: 'john', text: 'Buy milk' });
      expect(reply.body).toMatchObject({ kind: 'answer', plugin_id: 'buy' });
      expect(reply.body.text).toMatch(/^Order placed for milk: delivery to 123 Main St for John \(phone 555-0000\)/);
      expect(ordersOf(preset, 'john')).toHaveLength(1);
      const prompt = systemPromptOf(presetLlm.requests[0]!);
      expect(prompt).toContain('### buy: Buy Plugin');
      expect(prompt).toContain('- item (string, required)');
      for (const hidden of ['- address', '- phone', '- contact_name', '123 Main St', '555-0000']) expect(prompt).not.toContain(hidden);
      expect(presetLlm.requests).toHaveLength(1); // post_process false: no second model call
    } finally {
      await preset.cleanup();
      await presetLlm.close();
      rmSync(presetDir, { recursive: true, force: true });
    }
  });

  it('profile plus one missing value — one question, the answer places the order without another model round', async () => {
    await setProfile(core, 'ann', { name: 'John', address: '123 Main St' });
    const user = channelUser(client, CHANNEL, 'ann');
    const question = await user.say('buy milk');
    expect(question).toMatchObject({ kind: 'question', plugin_id: 'buy' });
    expect(question.text).toContain('phone');
    expect(question.text).toContain('"123 Main St"');
    const before = llm.requests.length;
    const done = await user.say('yes, phone=555-1234');
    expect(done).toMatchObject({ kind: 'answer', plugin_id: 'buy' });
    expect(llm.requests.length).toBe(before);
    expect(ordersOf(core, 'ann')[0]).toMatchObject({ item: 'milk', address: '123 Main St', phone: '555-1234', contact_name: 'John' });
    // The model saw item only: it passed no profile value.
    expect(requestsFor('buy milk').length).toBeGreaterThan(0);
  });

  it('profile values needing confirmation — confirmed with "yes"', async () => {
    await setProfile(core, 'bea', { name: 'John', address: '123 Main St', phone: '555-0000' });
    const user = channelUser(client, CHANNEL, 'bea');
    const question = await user.say('buy milk');
    expect(question.kind).toBe('question');
    expect(question.text).toContain('"123 Main St"');
    expect(question.text).toContain('"555-0000"');
    expect(ordersOf(core, 'bea')).toHaveLength(0);
    expect((await user.say('Yes')).kind).toBe('answer');
    expect(ordersOf(core, 'bea')[0]).toMatchObject({ address: '123 Main St', phone: '555-0000' });
  });

  it('profile values needing confirmation — corrected ("Actually use 456 Oak Ave, 555-1234")', async () => {
    await setProfile(core, 'cid', { name: 'John', address: '123 Main St', phone: '555-0000' });
    const user = channelUser(client, CHANNEL, 'cid');
    expect((await user.say('buy milk')).kind).toBe('question');
    const done = await user.say('Actually use 456 Oak Ave, 555-1234');
    expect(done).toMatchObject({ kind: 'answer', plugin_id: 'buy' });
    expect(ordersOf(core, 'cid')).toHaveLength(1);
    expect(ordersOf(core, 'cid')[0]).toMatchObject({ item: 'milk', address: '456 Oak Ave', phone: '555-1234', contact_name: 'John' });
  });

  it('everything missing — one question listing all, one answer, one order', async () => {
    const user = channelUser(client, CHANNEL, 'dot');
    const question = await user.say('buy bread');
    expect(question.kind).toBe('question');
    for (const name of ['address', 'phone', 'contact_name']) expect(question.text).toContain(name);
    expect((await user.say('address="9 Pine Rd", phone=555-0199, contact_name=Dot')).kind).toBe('answer');
    expect(ordersOf(core, 'dot')).toEqual([expect.objectContaining({ item: 'bread', address: '9 Pine Rd', phone: '555-0199', contact_name: 'Dot' })]);
  });

  it('cancel clears the pending call; the next "yes" goes to the model and orders nothing', async () => {
    await setProfile(core, 'eve', { name: 'Eve', address: '1 Elm St', phone: '555-2222' });
    const user = channelUser(client, CHANNEL, 'eve');
    expect((await user.say('buy milk')).kind).toBe('question');
    expect(await user.say('never mind')).toMatchObject({ text: 'Cancelled.' });
    expect((await user.say('yes')).text).toContain('Yes to what?');
    expect(ordersOf(core, 'eve')).toHaveLength(0);
  });

  it('TTL expiry: after pending_ttl_sec the "yes" takes the normal path and orders nothing', async () => {
    const ttlDir = makePluginsDir({ shipped: [{ id: 'buy' }] });
    const ttl = await startTestCore({ pluginsDir: ttlDir, overrides: { llm: { base_url: llm.url, model: 'scripted' }, conversation: { pending_ttl_sec: 1 } } });
    try {
      await setProfile(ttl, 'fay', { name: 'Fay', address: '1 Elm St', phone: '555-3333' });
      const ask = (text: string) => ttl.api<ChannelMessageOut>('POST', '/api/messages', { channel: 'web', user_id: 'fay', text });
      expect((await ask('buy milk')).body.kind).toBe('question');
      await new Promise((r) => setTimeout(r, 1300));
      expect((await ask('yes')).body.text).toContain('Yes to what?');
      expect(ordersOf(ttl, 'fay')).toHaveLength(0);
    } finally {
      await ttl.cleanup();
      rmSync(ttlDir, { recursive: true, force: true });
    }
  });
});

describe('post-processing, failures and concurrency', () => {
  it('post_process true: one model call with post_process_prompt as the system instruction and the raw output as input', async () => {
    const reply = await channelUser(client, CHANNEL, 'gil').say('tell my fortune');
    expect(reply).toMatchObject({ kind: 'answer', plugin_id: 'fortune', text: 'POLISHED (Make the fortune sound mysterious.)' });
    const post = llm.requests.find((r) => isPostProcess(r) && lastUserText(r).includes('tell my fortune'))!;
    expect(post.messages[0]).toMatchObject({ role: 'system', content: 'Make the fortune sound mysterious.' });
    expect(lastUserText(post)).toContain('RAW FORTUNE: you will write tests.');
  });

  it('post_process true with a failing model falls back to the raw output', async () => {
    const reply = await channelUser(client, CHANNEL, 'gil').say('fortune please, FAIL POST');
    expect(reply).toMatchObject({ kind: 'answer', text: 'RAW FORTUNE: you will write tests.' });
  });

  it('post_process false: the raw output goes to the channel and the model is not called again', async () => {
    const before = llm.requests.length;
    const reply = await channelUser(client, CHANNEL, 'gil').say('quick time check');
    expect(reply).toMatchObject({ kind: 'answer', plugin_id: 'time' });
    expect(reply.text).toMatch(/^It is .* in UTC \(UTC\+00:00\)\.$/);
    expect(llm.requests.length).toBe(before + 1);
  });

  it('a plugin timeout gives a clear message (no post-processing)', async () => {
    const started = Date.now();
    const reply = await channelUser(client, CHANNEL, 'hal').say('dim the lamp');
    expect(reply).toMatchObject({ kind: 'error', plugin_id: 'sleepy' });
    expect(reply.text).toContain('did not answer in time');
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a plugin error gives a clear message and is not post-processed', async () => {
    const before = llm.requests.length;
    const reply = await channelUser(client, CHANNEL, 'hal').say('open the garage');
    expect(reply).toMatchObject({ kind: 'error', plugin_id: 'broken' });
    expect(reply.text).toContain('door motor jammed');
    expect(llm.requests.length).toBe(before + 1);
  });

  it('two users in parallel: a slow plugin call of one never delays the other', async () => {
    const slowUser = channelUser(client, CHANNEL, 'ida');
    const quickUser = channelUser(client, CHANNEL, 'jo');
    const started = Date.now();
    const slow = slowUser.say('build the report').then((r) => ({ r, at: Date.now() - started }));
    await new Promise((r) => setTimeout(r, 100));
    const quick = await quickUser.say('what time is it?');
    const quickAt = Date.now() - started;
    expect(quick).toMatchObject({ kind: 'answer', plugin_id: 'time', user_id: 'jo' });
    expect(quickAt).toBeLessThan(1500);
    const { r, at } = await slow;
    expect(r).toMatchObject({ kind: 'answer', text: 'Report ready after 2000 ms.', user_id: 'ida' });
    expect(at).toBeGreaterThanOrEqual(2000);
  });
});

describe('what the model is shown', () => {
  it('only the top-k plugins, out of 36 registered', async () => {
    for (let i = 0; i < 30; i++) {
      const res = await core.api('POST', '/api/plugins/register', {
        id: `extra-${i}`,
        name: `Extra ${i}`,
        description: `Extra plugin number ${i} for household chores like laundry ${i} and dishes.`,
        type: 'http',
        config: { base_url: `${llm.url}/extra-${i}` },
        health_check_url: `${llm.url}/models`,
        capabilities: [{ id: 'run', name: 'Run', description: `Do chore ${i}.`, parameters: [] }],
      });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    expect(core.ctx.registry.list()).toHaveLength(36);
    await channelUser(client, CHANNEL, 'kim').say('what time is it for laundry?');
    const prompt = systemPromptOf(requestsFor('what time is it for laundry?')[0]!);
    const shown = [...prompt.matchAll(/^### ([a-z0-9_-]+):/gm)].map((m) => m[1]);
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.length).toBeLessThanOrEqual(core.ctx.config.retrieval.top_k);
    expect(shown).toContain('time');
    // The tools the model gets are fixed (routing, search, profile corrections), nothing per plugin.
    expect(
      requestsFor('what time is it for laundry?')[0]!
        .tools!.map((t) => t.function.name)
        .sort(),
    ).toEqual(['find_plugins', 'profile_update', 'route_to_plugin']);
  });
});

describe('bad input on the real Core', () => {
  it('empty text and whitespace get a clear error reply; nothing is invoked', async () => {
    const user = channelUser(client, CHANNEL, 'lee');
    const before = llm.requests.length;
    expect(await user.say('')).toMatchObject({ kind: 'error', text: expect.stringContaining('empty') });
    expect(await user.say('   ')).toMatchObject({ kind: 'error', text: expect.stringContaining('empty') });
    expect(llm.requests.length).toBe(before);
  });

  it('1 MB text: dropped by the broker on MQTT (the Core keeps answering), 4xx over HTTP; big-but-allowed payloads get a clear reply', async () => {
    const big = 'x'.repeat(1024 * 1024);
    const before = llm.requests.length;
    await client.publish(topics.channelIn(CHANNEL), { request_id: 'mega-1', user_id: 'lee', text: big });
    // Over the broker's hard cap the packet never reaches the Core (logged as "oversized publish dropped").
    expect(await client.quiet(topics.channelOut(CHANNEL), 500, (m) => m.payload.toString().includes('mega-1'))).toBe(true);
    // Under the hard cap but over broker.max_payload_bytes: the channel refuses it before parsing, with a reply.
    const over = 'x'.repeat(core.ctx.config.broker.max_payload_bytes + 10);
    const mark = client.received.length;
    await client.publish(topics.channelIn(CHANNEL), { request_id: 'over-1', user_id: 'lee', text: over });
    const overReply = await client.waitFor(
      topics.channelOut(CHANNEL),
      (m) => client.received.indexOf(m) >= mark && m.json<ChannelMessageOut>().text.startsWith('Invalid message'),
    );
    expect(overReply.json<ChannelMessageOut>()).toMatchObject({ kind: 'error' });
    expect(overReply.payload.length).toBeLessThan(2000);
    // Under both limits but over conversation.max_text_bytes: the engine's own message, echoing the request.
    const long = await channelUser(client, CHANNEL, 'lee').say('y'.repeat(100_000));
    expect(long).toMatchObject({ kind: 'error', user_id: 'lee', text: expect.stringContaining('too long') });
    expect(llm.requests.length).toBe(before);
    const http = await fetch(`${core.httpUrl}/api/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${core.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: 'web', user_id: 'lee', text: big }),
    });
    // Either the HTTP body limit refuses it or the engine answers with its "too long" message.
    if (http.status === 200) expect(await http.json()).toMatchObject({ kind: 'error', text: expect.stringContaining('too long') });
    else expect([400, 413]).toContain(http.status);
    expect((await channelUser(client, CHANNEL, 'lee').say('/time now timezone=UTC')).kind).toBe('answer');
  });

  it('invalid JSON on the in topic gets an error reply; the Core keeps answering', async () => {
    await client.publish(topics.channelIn(CHANNEL), '{"user_id": "lee", "text": ');
    const error = await client.waitFor(topics.channelOut(CHANNEL), (m) => m.json<ChannelMessageOut>().text.startsWith('Invalid message'));
    expect(error.json<ChannelMessageOut>().kind).toBe('error');
    expect((await channelUser(client, CHANNEL, 'lee').say('/time now timezone=UTC')).kind).toBe('answer');
  });

  it('an invalid channel name: dropped on MQTT (no reply anywhere), 400 over HTTP', async () => {
    await client.subscribe('homeclaw/channels/+/out');
    await client.publish('homeclaw/channels/Bad Channel!/in', { user_id: 'lee', text: 'hi', request_id: 'bad-channel-1' });
    expect(await client.quiet('homeclaw/channels/+/out', 400, (m) => m.payload.toString().includes('bad-channel-1'))).toBe(true);
    const http = await core.api<{ problems: { path: string }[] }>('POST', '/api/messages', { channel: 'Bad Channel!', user_id: 'lee', text: 'hi' });
    expect(http.status).toBe(400);
    expect(http.body.problems.map((e) => e.path)).toContain('/channel');
  });

  it('a tool call naming an unknown plugin or capability goes back to the model as an error; nothing invoked', async () => {
    const stats = core.ctx.dispatcher.getStats();
    const unknown = await channelUser(client, CHANNEL, 'max').say('use the unknown plugin');
    expect(unknown.text).toContain('model saw tool result: Error: there is no plugin "nosuch"');
    const capability = await channelUser(client, CHANNEL, 'max').say('use an unknown capability');
    expect(capability.text).toContain('has no capability "nosuch"');
    expect(core.ctx.dispatcher.getStats()).toEqual(stats);
  });

  it('malformed tool arguments go back to the model as an error', async () => {
    const reply = await channelUser(client, CHANNEL, 'max').say('malformed call');
    expect(reply.text).toContain('model saw tool result: Error: the arguments of route_to_plugin are not valid JSON');
  });

  it('a model that loops calling tools is stopped after max_rounds with a clear message', async () => {
    const before = llm.requests.length;
    const reply = await channelUser(client, CHANNEL, 'max').say('loop forever');
    expect(reply.kind).toBe('error');
    expect(reply.text).toContain('kept calling tools');
    expect(llm.requests.length - before).toBe(3);
  });
});

describe('LLM down', () => {
  it('a clear message naming the endpoint, and slash commands still work', async () => {
    const closed = await freePort();
    const downDir = makePluginsDir({ shipped: [{ id: 'time' }] });
    const down = await startTestCore({ pluginsDir: downDir, overrides: { llm: { base_url: `http://127.0.0.1:${closed}/v1`, model: 'm', timeout_sec: 5 } } });
    try {
      const ask = (text: string) => down.api<ChannelMessageOut>('POST', '/api/messages', { channel: 'web', user_id: 'ned', text });
      const reply = await ask('what time is it?');
      expect(reply.body.kind).toBe('error');
      expect(reply.body.text).toContain(`127.0.0.1:${closed}`);
      expect(reply.body.text).toContain('unreachable');
      expect(reply.body.text).toContain('slash commands still work');
      const slash = await ask('/time now timezone=Asia/Tokyo');
      expect(slash.body).toMatchObject({ kind: 'answer', plugin_id: 'time' });
      expect(slash.body.text).toContain('Asia/Tokyo');
    } finally {
      await down.cleanup();
      rmSync(downDir, { recursive: true, force: true });
    }
  });
});

// The OpenAI-compatible endpoint on the real Core (shipped built-ins, BM25, no LLM), spoken to by the real
// `openai` npm client as Open WebUI or n8n would: plain and streamed answers, the whole conversation
// resent every turn (so "yes" continues the pending call), user tokens, and every error in OpenAI's shape.
import { join } from 'node:path';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOrders } from '../../plugins/buy/index.js';
import { startTestCore, type TestCore } from '../helpers/core.js';
import { memoryLogger } from '../helpers/memory-logger.js';
import { ensureBuilt, SHIPPED_PLUGINS_DIR } from '../e2e/helpers.js';

let core: TestCore;
let aliceToken: string;
const client = (apiKey: string): OpenAI => new OpenAI({ baseURL: `${core.httpUrl}/v1`, apiKey, maxRetries: 0, timeout: 30_000 });
const ordersOf = (user: string) => listOrders(join(core.dataDir, 'plugins', 'buy')).filter((o) => o.user_id === user);

beforeAll(async () => {
  await ensureBuilt();
  core = await startTestCore({ pluginsDir: SHIPPED_PLUGINS_DIR });
  for (const [user, values] of Object.entries({
    alice: { name: 'Alice', address: '1 Alice Way', phone: '555-0101' },
    bob: { name: 'Bob', address: '2 Bob Road', phone: '555-0202' },
    household: { name: 'The Household', address: '3 House Lane', phone: '555-0303' },
  })) {
    expect((await core.api('POST', `/api/profiles/${user}`, { set: values })).status).toBe(200);
  }
  aliceToken = core.ctx.users.add('alice').token;
}, 120_000);

afterAll(async () => {
  await core?.cleanup();
});

const system = (minute: number): ChatCompletionMessageParam => ({ role: 'system', content: `You are a helpful home assistant. The time is 14:${minute}.` });

describe('models', () => {
  it("GET /v1/models lists homeclaw in OpenAI's list shape; retrieve works; another model is not found", async () => {
    const openai = client(aliceToken);
    const models = [];
    for await (const model of openai.models.list()) models.push(model);
    expect(models).toEqual([{ id: 'homeclaw', object: 'model', created: expect.any(Number), owned_by: 'homeclaw' }]);
    expect(await openai.models.retrieve('homeclaw')).toMatchObject({ id: 'homeclaw', object: 'model' });
    const missing = await openai.models.retrieve('gpt-4o').catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect(missing).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
  });
});

describe('chat completions', () => {
  it("a plain request is answered as a chat completion by the conversation engine, as the token's user", async () => {
    const { data, response } = await client(aliceToken)
      .chat.completions.create({
        model: 'homeclaw',
        messages: [system(1), { role: 'user', content: '/time now timezone=Asia/Tokyo' }],
        temperature: 0.3,
        max_tokens: 50,
      })
      .withResponse();
    expect(data).toMatchObject({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'homeclaw',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: expect.stringMatching(/in Asia\/Tokyo \(UTC\+09:00\)\.$/), refusal: null },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    });
    expect(Math.abs(data.created - Date.now() / 1000)).toBeLessThan(600);
    expect(response.headers.get('x-homeclaw-kind')).toBe('answer');
    expect(response.headers.get('x-homeclaw-session')).toMatch(/^openai-/);
    const audit = await core.api<{ entries: { user_id: string; channel: string; plugin_id: string }[] }>('GET', '/api/audit?plugin=time&limit=1');
    expect(audit.body.entries[0]).toMatchObject({ user_id: 'alice', channel: 'openai', plugin_id: 'time' });
  });

  it('stream: true answers with chat.completion.chunk events (role, content, finish, usage) and [DONE]', async () => {
    const stream = await client(aliceToken).chat.completions.create({
      model: 'homeclaw',
      messages: [{ role: 'user', content: [{ type: 'text', text: '/time now timezone=UTC' }] }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'homeclaw')).toBe(true);
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant');
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toMatch(/in UTC \(UTC\+00:00\)\.$/);
    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { total_tokens: 0 } });

    const raw = await fetch(`${core.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${aliceToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'homeclaw', stream: true, messages: [{ role: 'user', content: '/time now timezone=UTC' }] }),
    });
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const body = await raw.text();
    expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(body.split('\n\n').filter((line) => line.startsWith('data: {'))).toHaveLength(3);
  });

  it('two turns: the question, then "yes" with the whole history resent continues the pending call', async () => {
    const openai = client(aliceToken);
    const first: ChatCompletionMessageParam[] = [system(2), { role: 'user', content: 'buy me some milk' }];
    const question = (await openai.chat.completions.create({ model: 'homeclaw', messages: first })).choices[0]?.message.content ?? '';
    expect(question).toContain('"1 Alice Way"');
    expect(question).toContain('Is that correct?');
    expect(ordersOf('alice')).toHaveLength(0);

    // The system prompt changed (it carries the time), and the client trimmed the answer: still the same conversation.
    const second: ChatCompletionMessageParam[] = [system(3), first[1]!, { role: 'assistant', content: `${question}\n` }, { role: 'user', content: 'yes' }];
    const stream = await openai.chat.completions.create({ model: 'homeclaw', messages: second, stream: true });
    let done = '';
    for await (const chunk of stream) done += chunk.choices[0]?.delta.content ?? '';
    expect(done).toMatch(/^Order placed for milk: delivery to 1 Alice Way for Alice \(phone 555-0101\)\. Order id [0-9a-f-]{36}\.$/);
    expect(ordersOf('alice')).toHaveLength(1);
    expect(ordersOf('alice')[0]).toMatchObject({ item: 'milk', channel: 'openai' });
  });

  it('a "yes" whose history the Core did not answer (edited, or another conversation) confirms nothing', async () => {
    const openai = client(aliceToken);
    const before = ordersOf('alice').length;
    const ask = [{ role: 'user' as const, content: 'buy me some bread' }];
    const question = (await openai.chat.completions.create({ model: 'homeclaw', messages: ask })).choices[0]?.message.content ?? '';
    expect(question).toContain('Is that correct?');
    const edited = await openai.chat.completions.create({
      model: 'homeclaw',
      messages: [...ask, { role: 'assistant', content: 'I have your address as "somewhere else". Is that correct?' }, { role: 'user', content: 'yes' }],
    });
    expect(edited.choices[0]?.message.content).not.toMatch(/^Order placed/);
    const bare = await openai.chat.completions.create({ model: 'homeclaw', messages: [{ role: 'user', content: 'yes' }] });
    expect(bare.choices[0]?.message.content).not.toMatch(/^Order placed/);
    expect(ordersOf('alice')).toHaveLength(before);
    // Bob (the admin naming him) resending Alice's exact history is another user's conversation.
    const asBob = await client(core.adminToken).chat.completions.create({
      model: 'homeclaw',
      user: 'bob',
      messages: [...ask, { role: 'assistant', content: question }, { role: 'user', content: 'yes' }],
    });
    expect(asBob.choices[0]?.message.content).not.toMatch(/^Order placed/);
    expect(ordersOf('alice')).toHaveLength(before);
    expect(ordersOf('bob')).toHaveLength(0);
  });

  it('the x-homeclaw-session header names the session explicitly', async () => {
    const openai = client(aliceToken);
    const headers = { 'x-homeclaw-session': 'kitchen-tablet-1' };
    const { response } = await openai.chat.completions
      .create({ model: 'homeclaw', messages: [{ role: 'user', content: 'buy me some milk' }] }, { headers })
      .withResponse();
    expect(response.headers.get('x-homeclaw-session')).toBe('kitchen-tablet-1');
    const done = await openai.chat.completions.create({ model: 'homeclaw', messages: [{ role: 'user', content: 'yes' }] }, { headers });
    expect(done.choices[0]?.message.content).toMatch(/^Order placed for milk/);
  });

  it("the admin token speaks as the request's user, or as openai_endpoint.default_user", async () => {
    const admin = client(core.adminToken);
    const asBob = await admin.chat.completions.create({ model: 'homeclaw', user: 'bob', messages: [{ role: 'user', content: 'buy me some tea' }] });
    expect(asBob.choices[0]?.message.content).toContain('"2 Bob Road"');
    const asHousehold = await admin.chat.completions.create({ model: 'homeclaw', messages: [{ role: 'user', content: 'buy me some tea' }] });
    expect(asHousehold.choices[0]?.message.content).toContain('"3 House Lane"');
  });

  it('client tools are ignored with a note in the x-homeclaw-note header; the answer still comes', async () => {
    const { data, response } = await client(aliceToken)
      .chat.completions.create({
        model: 'homeclaw',
        messages: [
          { role: 'user', content: 'turn on the light' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'HassTurnOn', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '{"success": true}' },
          { role: 'user', content: '/time now timezone=UTC' },
        ],
        tools: [{ type: 'function', function: { name: 'HassTurnOn', parameters: { type: 'object', properties: {} } } }],
        tool_choice: 'auto',
      })
      .withResponse();
    expect(data.choices[0]?.message.content).toMatch(/in UTC/);
    expect(data.choices[0]?.message.tool_calls).toBeUndefined();
    expect(response.headers.get('x-homeclaw-note')).toBe('ignored: tools, tool calls, tool messages (HomeClaw answers with its own plugins)');
  });

  it('an over-long message is answered by the engine with its reason (kind error)', async () => {
    const { data, response } = await client(aliceToken)
      .chat.completions.create({ model: 'homeclaw', messages: [{ role: 'user', content: 'x'.repeat(20_000) }] })
      .withResponse();
    expect(data.choices[0]?.message.content).toMatch(/too long \(20000 bytes; the limit is 16384 bytes\)/);
    expect(response.headers.get('x-homeclaw-kind')).toBe('error');
  });
});

describe("bad input, in OpenAI's error shape", () => {
  const post = async (body: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${core.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${aliceToken}`, 'content-type': 'application/json', ...headers },
      body,
    });
    return { status: res.status, body: (await res.json()) as { error: { message: string; type: string; param: string | null; code: string | null } } };
  };

  it('a wrong or missing API key: 401 invalid_api_key (AuthenticationError)', async () => {
    const wrong = await client('hcu_not-a-real-token')
      .chat.completions.create({ model: 'homeclaw', messages: [{ role: 'user', content: 'hi' }] })
      .catch((err: unknown) => err);
    expect(wrong).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(wrong).toMatchObject({ status: 401, code: 'invalid_api_key', type: 'authentication_error' });
    const none = await fetch(`${core.httpUrl}/v1/models`);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({
      error: { message: expect.stringContaining('You did not provide an API key'), type: 'authentication_error', param: null, code: 'invalid_api_key' },
    });
  });

  it('an unknown model: 404 model_not_found', async () => {
    const err = await client(aliceToken)
      .chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err).toMatchObject({ status: 404, code: 'model_not_found', param: 'model' });
  });

  it('a user token naming another user: 403, and nothing runs', async () => {
    const before = ordersOf('bob').length;
    const err = await client(aliceToken)
      .chat.completions.create({ model: 'homeclaw', user: 'bob', messages: [{ role: 'user', content: '/buy order item=milk' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(err).toMatchObject({ status: 403, code: 'user_mismatch', param: 'user', type: 'permission_error' });
    expect((err as Error).message).toContain('This API key acts as "alice"; it may not speak as "bob"');
    expect(ordersOf('bob')).toHaveLength(before);
    // Naming itself is fine.
    const own = await client(aliceToken).chat.completions.create({ model: 'homeclaw', user: 'alice', messages: [{ role: 'user', content: '/time now' }] });
    expect(own.choices[0]?.message.content).toMatch(/^It is/);
  });

  it('no user message, no messages, bad types, n > 1, an invalid user id: 400 naming the parameter', async () => {
    const cases: [unknown, string, string][] = [
      [{ model: 'homeclaw', messages: [{ role: 'system', content: 'be nice' }] }, 'messages', 'invalid_value'],
      [{ model: 'homeclaw', messages: [{ role: 'user', content: '   ' }] }, 'messages[0].content', 'invalid_value'],
      [{ model: 'homeclaw' }, 'messages', 'missing_required_parameter'],
      [{ messages: [{ role: 'user', content: 'hi' }] }, 'model', 'missing_required_parameter'],
      [{ model: 'homeclaw', messages: [{ role: 'wizard', content: 'hi' }] }, 'messages[0].role', 'invalid_value'],
      [{ model: 'homeclaw', messages: [{ role: 'user', content: 42 }] }, 'messages[0].content', 'invalid_type'],
      [{ model: 'homeclaw', messages: [{ role: 'user', content: 'hi' }], n: 2 }, 'n', 'invalid_value'],
      [{ model: 'homeclaw', messages: [{ role: 'user', content: 'hi' }], stream: 'yes' }, 'stream', 'invalid_type'],
    ];
    for (const [body, param, code] of cases) {
      const res = await post(JSON.stringify(body));
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param, code });
    }
    const adminBadUser = await fetch(`${core.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${core.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'homeclaw', user: 'not a user id!', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(adminBadUser.status).toBe(400);
    expect(((await adminBadUser.json()) as { error: { param: string } }).error.param).toBe('user');
  });

  it('unparsable JSON or text: 400; a body over openai_endpoint.max_body_bytes: 413; an unknown content type: 415; a bad session header: 400', async () => {
    const bad = await post('{"model": "homeclaw", "messages": [');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json', param: null });
    const big = await post(JSON.stringify({ model: 'homeclaw', messages: [{ role: 'user', content: 'x'.repeat(1_100_000) }] }));
    expect(big.status).toBe(413);
    expect(big.body.error).toMatchObject({ code: 'request_too_large', message: expect.stringContaining('1048576 bytes (openai_endpoint.max_body_bytes)') });
    const xml = await post('<chat/>', { 'content-type': 'application/xml' });
    expect(xml.status).toBe(415);
    expect(xml.body.error.code).toBe('unsupported_media_type');
    const text = await post('hello', { 'content-type': 'text/plain' });
    expect(text.status).toBe(400);
    expect(text.body.error).toMatchObject({ code: 'invalid_type', message: 'The request body must be a JSON object.' });
    const session = await post(JSON.stringify({ model: 'homeclaw', messages: [{ role: 'user', content: 'hi' }] }), {
      'x-homeclaw-session': 'no spaces allowed',
    });
    expect(session.status).toBe(400);
    expect(session.body.error.code).toBe('invalid_session_header');
  });
});

describe("user_field: conversation (Home Assistant's OpenAI-compatible integrations)", () => {
  let haCore: TestCore;
  beforeAll(async () => {
    haCore = await startTestCore({ pluginsDir: SHIPPED_PLUGINS_DIR, overrides: { openai_endpoint: { user_field: 'conversation' } } });
    expect((await haCore.api('POST', '/api/profiles/household', { set: { name: 'The Household', address: '3 House Lane', phone: '555-0303' } })).status).toBe(
      200,
    );
  }, 60_000);
  afterAll(async () => {
    await haCore?.cleanup();
  });

  it('"user" carries the conversation id: it keys the session, and never names who speaks', async () => {
    const household = haCore.ctx.users.add('household').token;
    const openai = new OpenAI({ baseURL: `${haCore.httpUrl}/v1`, apiKey: household, maxRetries: 0 });
    const conversation = '01JZOPENAIHA0000000000000A';
    const ask = async (text: string, history: ChatCompletionMessageParam[] = []) => {
      const stream = await openai.chat.completions.create({
        model: 'homeclaw',
        user: conversation,
        stream: true,
        messages: [system(4), ...history, { role: 'user', content: text }],
      });
      let answer = '';
      for await (const chunk of stream) answer += chunk.choices[0]?.delta.content ?? '';
      return answer;
    };
    const question = await ask('buy me some milk');
    expect(question).toContain('"3 House Lane"');
    // Home Assistant keeps its own chat log; whatever it resends, the conversation id continues the session.
    expect(
      await ask('yes', [
        { role: 'user', content: 'buy me some milk' },
        { role: 'assistant', content: 'Sure.' },
      ]),
    ).toMatch(/^Order placed for milk: delivery to 3 House Lane/);
    expect(listOrders(join(haCore.dataDir, 'plugins', 'buy')).filter((o) => o.user_id === 'household')).toHaveLength(1);
  });
});

describe('conversation.max_messages_per_minute on the HTTP front doors', () => {
  let limited: TestCore;
  const logged = memoryLogger('info');
  beforeAll(async () => {
    limited = await startTestCore({ pluginsDir: SHIPPED_PLUGINS_DIR, log: logged.log, overrides: { conversation: { max_messages_per_minute: 2 } } });
  }, 60_000);
  afterAll(async () => {
    await limited?.cleanup();
  });

  it('over the budget: 429 rate_limit_exceeded with Retry-After (RateLimitError), streamed or not, and on /api/messages', async () => {
    const token = limited.ctx.users.add('dan').token;
    const openai = new OpenAI({ baseURL: `${limited.httpUrl}/v1`, apiKey: token, maxRetries: 0 });
    const ask = (text: string, stream = false) => openai.chat.completions.create({ model: 'homeclaw', stream, messages: [{ role: 'user', content: text }] });
    for (const text of ['/time now', '/help']) expect(await ask(text)).toMatchObject({ object: 'chat.completion' });

    for (const stream of [false, true]) {
      const refused = await ask('/time now', stream).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
      const error = refused as InstanceType<typeof OpenAI.RateLimitError>;
      expect(error.status).toBe(429);
      expect(error.code).toBe('rate_limit_exceeded');
      expect(error.type).toBe('requests');
      // One message every 30 s (a few seconds less once time has passed on a loaded machine).
      const retryAfter = Number(error.headers?.get?.('retry-after') ?? (error.headers as unknown as Record<string, string>)['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(25);
      expect(retryAfter).toBeLessThanOrEqual(30);
      expect(error.message).toContain(`try again in ${retryAfter}s`);
    }

    const viaApi = await fetch(`${limited.httpUrl}/api/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ channel: 'web', text: '/time now' }),
    });
    expect(viaApi.status).toBe(429);
    const retryAfter = Number(viaApi.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(25);
    expect(((await viaApi.json()) as { message: string }).message).toContain(`too many messages from this user; try again in ${retryAfter} s`);
    // Another user is not held back.
    const other = await limited.api<{ kind: string }>('POST', '/api/messages', { channel: 'web', user_id: 'eve', text: '/help' });
    expect(other).toMatchObject({ status: 200, body: { kind: 'answer' } });
  });

  it('a client repeating refused requests is logged once per window, not once per request', async () => {
    const before = logged.lines.length;
    const token = limited.ctx.users.add('fay').token;
    const openai = new OpenAI({ baseURL: `${limited.httpUrl}/v1`, apiKey: token, maxRetries: 0 });
    for (let i = 0; i < 20; i++) {
      await expect(openai.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(
        OpenAI.NotFoundError,
      );
    }
    for (let i = 0; i < 20; i++) {
      await fetch(`${limited.httpUrl}/api/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ channel: 'web', text: '/help' }),
      });
    }
    const lines = logged.lines.slice(before);
    expect(lines.filter((line) => line.msg === 'OpenAI request refused' && line.code === 'model_not_found')).toHaveLength(1);
    expect(lines.filter((line) => line.msg === 'message refused: too many from this user' && line.user_id === 'fay')).toHaveLength(1);
  });
});

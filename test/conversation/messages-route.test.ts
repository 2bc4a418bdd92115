// POST /api/messages on a real fastify instance (inject): the reply JSON, and 400 with every problem.
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { registerMessageRoutes } from '../../src/api/routes/messages.js';
import type { ConversationEngine, UserMessage } from '../../src/conversation/engine.js';

const seen: UserMessage[] = [];
const engine: ConversationEngine = {
  async handleMessage(message) {
    seen.push(message);
    return {
      request_id: message.request_id ?? 'generated',
      user_id: message.user_id,
      session_id: message.session_id ?? 'default',
      text: `echo ${message.text}`,
      kind: 'answer',
    };
  },
};

let app: ReturnType<typeof Fastify> | undefined;
afterEach(async () => {
  await app?.close();
  seen.length = 0;
});

async function build() {
  app = Fastify();
  await registerMessageRoutes(app, { engine });
  return app;
}

describe('POST /api/messages', () => {
  it('answers with the reply', async () => {
    const server = await build();
    const res = await server.inject({ method: 'POST', url: '/api/messages', payload: { channel: 'web', user_id: 'ann', session_id: 's', text: 'hi' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ request_id: 'generated', user_id: 'ann', session_id: 's', text: 'echo hi', kind: 'answer' });
    expect(seen[0]).toEqual({ channel: 'web', channel_type: 'http', user_id: 'ann', session_id: 's', text: 'hi' });
  });

  it('400 listing every problem of a bad body; the engine is not called', async () => {
    const server = await build();
    const res = await server.inject({ method: 'POST', url: '/api/messages', payload: { channel: 'Bad/Name', user_id: '', text: 5, extra: true } });
    expect(res.statusCode).toBe(400);
    const paths = (res.json() as { problems: { path: string }[] }).problems.map((e) => e.path).sort();
    expect(paths).toEqual(['/channel', '/extra', '/text', '/user_id']);
    const notObject = await server.inject({ method: 'POST', url: '/api/messages', payload: [1, 2] });
    expect(notObject.statusCode).toBe(400);
    const badContext = await server.inject({
      method: 'POST',
      url: '/api/messages',
      payload: { channel: 'web', user_id: 'ann', text: 'hi', channel_type: 'x'.repeat(65), app_id: '', metadata: [1] },
    });
    expect((badContext.json() as { problems: { path: string }[] }).problems.map((e) => e.path).sort()).toEqual(['/app_id', '/channel_type', '/metadata']);
    expect(seen).toHaveLength(0);
  });

  it('passes channel_type, app_id and metadata on to the engine (channel_type defaults to http)', async () => {
    const server = await build();
    await server.inject({
      method: 'POST',
      url: '/api/messages',
      payload: { channel: 'web', user_id: 'ann', text: 'hi', channel_type: 'IM', app_id: 'kitchen', metadata: { chat: 7 } },
    });
    expect(seen[0]).toEqual({ channel: 'web', channel_type: 'IM', app_id: 'kitchen', metadata: { chat: 7 }, user_id: 'ann', text: 'hi' });
  });
});

describe('POST /api/messages with "async": true', () => {
  it('answers 202 {request_id} at once and publishes the reply through publishReply', async () => {
    const published: { channel: string; reply: { request_id: string; text: string } }[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slowEngine: ConversationEngine = {
      async handleMessage(message) {
        await gate;
        return { request_id: message.request_id ?? 'missing', user_id: message.user_id, text: `echo ${message.text}`, kind: 'answer' };
      },
    };
    app = Fastify();
    await registerMessageRoutes(app, { engine: slowEngine, publishReply: async (channel, reply) => void published.push({ channel, reply }) });
    const res = await app.inject({ method: 'POST', url: '/api/messages', payload: { channel: 'web', user_id: 'ann', text: 'hi', async: true } });
    expect(res.statusCode).toBe(202);
    const { request_id } = res.json() as { request_id: string };
    expect(request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(published).toHaveLength(0); // answered before the engine finished
    release();
    await new Promise((r) => setTimeout(r, 20));
    expect(published).toEqual([{ channel: 'web', reply: { request_id, user_id: 'ann', text: 'echo hi', kind: 'answer' } }]);
  });

  it('keeps a request_id the client chose', async () => {
    const published: string[] = [];
    app = Fastify();
    await registerMessageRoutes(app, { engine, publishReply: async (_channel, reply) => void published.push(reply.request_id) });
    const res = await app.inject({
      method: 'POST',
      url: '/api/messages',
      payload: { channel: 'web', user_id: 'ann', text: 'hi', async: true, request_id: 'mine-1' },
    });
    expect(res.json()).toMatchObject({ request_id: 'mine-1' });
    await new Promise((r) => setTimeout(r, 20));
    expect(published).toEqual(['mine-1']);
  });

  it('400 when async is not a boolean, or when no publisher is wired', async () => {
    const server = await build();
    const bad = await server.inject({ method: 'POST', url: '/api/messages', payload: { channel: 'web', user_id: 'ann', text: 'hi', async: 'yes' } });
    expect(bad.statusCode).toBe(400);
    expect(JSON.stringify(bad.json())).toContain('async must be a boolean');
    const unwired = await server.inject({ method: 'POST', url: '/api/messages', payload: { channel: 'web', user_id: 'ann', text: 'hi', async: true } });
    expect(unwired.statusCode).toBe(400);
    expect(seen).toHaveLength(0);
  });

  it('429 with Retry-After when the user is over the message budget: checked first, and when the engine refuses', async () => {
    let wait = 12;
    const limited: ConversationEngine = {
      retryAfterSec: () => wait,
      async handleMessage(message) {
        seen.push(message);
        return { request_id: 'r', user_id: message.user_id, text: 'slow down', kind: 'error', error_code: 'rate_limited', retry_after_sec: 7 };
      },
    };
    app = Fastify();
    await registerMessageRoutes(app, { engine: limited, publishReply: async () => {} });
    for (const async of [false, true]) {
      const res = await app.inject({ method: 'POST', url: '/api/messages', payload: { channel: 'web', user_id: 'ann', text: 'hi', async } });
      expect(res.statusCode).toBe(429);
      expect(res.headers['retry-after']).toBe('12');
    }
    expect(seen).toHaveLength(0);
    // The budget ran out between the check and the engine (another request of the same user).
    wait = 0;
    const res = await app.inject({ method: 'POST', url: '/api/messages', payload: { channel: 'web', user_id: 'ann', text: 'hi' } });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.json()).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    expect((res.json() as { message: string }).message).toMatch(/too many messages from this user; try again in 7 s/);
  });
});

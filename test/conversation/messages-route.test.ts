// POST /api/messages on a real fastify instance (inject): the reply JSON, and 400 with every problem.
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { registerMessageRoutes } from '../../src/api/routes/messages.js';
import type { ConversationEngine, UserMessage } from '../../src/conversation/engine.js';

const seen: UserMessage[] = [];
const engine: ConversationEngine = {
  async handleMessage(message) {
    seen.push(message);
    return { request_id: message.request_id ?? 'generated', user_id: message.user_id, session_id: message.session_id ?? 'default', text: `echo ${message.text}`, kind: 'answer' };
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
    expect(seen[0]).toEqual({ channel: 'web', user_id: 'ann', session_id: 's', text: 'hi' });
  });

  it('400 listing every problem of a bad body; the engine is not called', async () => {
    const server = await build();
    const res = await server.inject({ method: 'POST', url: '/api/messages', payload: { channel: 'Bad/Name', user_id: '', text: 5, extra: true } });
    expect(res.statusCode).toBe(400);
    const paths = (res.json() as { errors: { path: string }[] }).errors.map((e) => e.path).sort();
    expect(paths).toEqual(['/channel', '/extra', '/text', '/user_id']);
    const notObject = await server.inject({ method: 'POST', url: '/api/messages', payload: [1, 2] });
    expect(notObject.statusCode).toBe(400);
    expect(seen).toHaveLength(0);
  });
});

// The chat completion request's schema validates POST /v1/chat/completions, refusals come in OpenAI's
// error shape naming the parameter as OpenAI does, and the OpenAPI document shows exactly that schema.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/api/openapi.js';
import { createHttpServer, type HttpServer } from '../../src/api/server.js';
import { registerOpenAiRoutes } from '../../src/channels/openai-endpoint.js';
import { ChatCompletionRequest } from '../../src/channels/openai-request-schema.js';
import type { OpenAiSessions } from '../../src/channels/openai-sessions.js';
import type { OpenAiEndpointConfig } from '../../src/config/types.js';
import type { UserMessage } from '../../src/conversation/engine.js';
import { silentLogger } from '../../src/log.js';

const TOKEN = 'openai-schema-token';
let server: HttpServer;
const answered: UserMessage[] = [];

async function post(payload: unknown) {
  const res = await server.app.inject({
    method: 'POST',
    url: '/v1/chat/completions',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
  return { status: res.statusCode, error: (res.json() as { error: { message: string; param: string | null; code: string | null; type: string } }).error };
}

beforeAll(async () => {
  server = createHttpServer({ host: '127.0.0.1', port: 0, token: TOKEN, log: silentLogger() });
  const sessions = { sessionFor: () => ({ session_id: 's', continued: false }), remember: () => {} } as unknown as OpenAiSessions;
  const settings = { user_field: 'user', default_user: 'household', max_body_bytes: 1_048_576 } as OpenAiEndpointConfig;
  registerOpenAiRoutes(server.app, {
    engine: {
      async handleMessage(message) {
        answered.push(message);
        return { request_id: 'r', user_id: message.user_id, text: 'hello', kind: 'answer' };
      },
    },
    sessions,
    settings,
    log: silentLogger(),
  });
  await server.app.ready();
});

afterAll(async () => {
  await server?.close();
});

describe('POST /v1/chat/completions validated by its schema', () => {
  it('refuses in OpenAI shape, naming the parameter the OpenAI way, and answers nothing', async () => {
    const noText = await post({ model: 'homeclaw', messages: [{ role: 'user', content: [{ type: 'text' }] }] });
    expect(noText).toMatchObject({
      status: 400,
      error: { type: 'invalid_request_error', param: 'messages[0].content[0].text', code: 'missing_required_parameter' },
    });
    const badUser = await post({ model: 'homeclaw', user: '', messages: [{ role: 'user', content: 'hi' }] });
    expect(badUser).toMatchObject({
      status: 400,
      error: { param: 'user', code: 'invalid_value', message: "Invalid 'user': user must be a non-empty string." },
    });
    const stream = await post({ model: 'homeclaw', stream: 'true', messages: [{ role: 'user', content: 'hi' }] });
    expect(stream).toMatchObject({ status: 400, error: { param: 'stream', code: 'invalid_type' } });
    expect(answered).toEqual([]);
  });

  it('accepts unknown fields (sampling options) and null where OpenAI allows it', async () => {
    const res = await server.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ model: 'homeclaw', temperature: 0.2, n: null, user: null, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.statusCode).toBe(200);
    expect(answered.map((m) => m.text)).toEqual(['hi']);
  });

  it('the document shows the validating schema', () => {
    const doc = openApiDocument(server.app) as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>> };
    const schema = doc.paths['/v1/chat/completions']?.['post']?.requestBody?.content['application/json']?.schema;
    expect(schema).toEqual(JSON.parse(JSON.stringify(ChatCompletionRequest)));
  });
});

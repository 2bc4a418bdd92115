// Every converted route on the real HTTP server (bearer auth, error handler, OpenAPI hooks): a bad body,
// query or path gets 400 with each problem named by its JSON Pointer and a message naming the field and
// rule, and nothing changes; the document's request part is exactly the schema that validated.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserTokenStore } from '../../../src/access/user-tokens.js';
import type { CredentialStore } from '../../../src/bus/credentials.js';
import { openApiDocument } from '../../../src/api/openapi.js';
import { CredentialRequest } from '../../../src/api/routes/admin-schema.js';
import { registerAdminRoutes } from '../../../src/api/routes/admin.js';
import { MessageBody } from '../../../src/api/routes/messages-schema.js';
import { registerMessageRoutes } from '../../../src/api/routes/messages.js';
import { ProfileReplace, ProfileUpdate } from '../../../src/api/routes/profiles-schema.js';
import { registerProfileRoutes } from '../../../src/api/routes/profiles.js';
import { SearchQueryString } from '../../../src/api/routes/search-schema.js';
import { registerSearchRoutes } from '../../../src/api/routes/search.js';
import { UserRequest } from '../../../src/api/routes/users-schema.js';
import { registerUserRoutes } from '../../../src/api/routes/users.js';
import { createHttpServer, type HttpServer } from '../../../src/api/server.js';
import type { UserMessage } from '../../../src/conversation/engine.js';
import type { JsonValue } from '../../../src/protocol/types.js';
import type { PluginSearchApi, SearchOptions } from '../../../src/retrieval/search-api.js';
import { silentLogger } from '../../../src/log.js';

const TOKEN = 'route-schemas-admin-token';
let server: HttpServer;
const messages: UserMessage[] = [];
const profiles = new Map<string, Record<string, JsonValue>>();
const credentialsAdded: string[] = [];
const usersAdded: unknown[] = [];
const searches: { q: string; options: SearchOptions | undefined }[] = [];

type Problems = { statusCode: number; message: string; problems: { path: string; message: string }[] };

async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) {
  const res = await server.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${TOKEN}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
  return { status: res.statusCode, body: res.json() as Problems };
}

beforeAll(async () => {
  server = createHttpServer({ host: '127.0.0.1', port: 0, token: TOKEN, log: silentLogger() });
  await registerMessageRoutes(server.app, {
    engine: {
      async handleMessage(message) {
        messages.push(message);
        return { request_id: 'r', user_id: message.user_id, text: 'ok', kind: 'answer' };
      },
    },
  });
  registerProfileRoutes(server.app, {
    profiles: {
      get: (user) => profiles.get(user) ?? {},
      set: (user, values) => void profiles.set(user, { ...(profiles.get(user) ?? {}), ...values }),
      unset: (user, keys) => {
        const kept = Object.fromEntries(Object.entries(profiles.get(user) ?? {}).filter(([key]) => !keys.includes(key)));
        profiles.set(user, kept);
        return kept;
      },
      replace: (user, values) => void profiles.set(user, values),
    },
  });
  const credentials = {
    list: () => [],
    add: async (name: string) => {
      credentialsAdded.push(name);
      return { name, password: 'p' };
    },
    remove: () => false,
    rotate: async () => undefined,
  } as unknown as CredentialStore;
  registerAdminRoutes(server.app, { credentials });
  const users = {
    list: () => [],
    add: (user_id: unknown) => {
      usersAdded.push(user_id);
      return { user_id, token: 't' };
    },
  } as unknown as UserTokenStore;
  registerUserRoutes(server.app, { users });
  const search: PluginSearchApi = {
    async search(q, options) {
      searches.push({ q, options });
      return { query: q, k: options?.k ?? 5, mode: 'bm25', hits: [] } as never;
    },
    status: () => ({}) as never,
  };
  registerSearchRoutes(server.app, { search });
  await server.app.ready();
});

afterAll(async () => {
  await server?.close();
});

describe('a refused body lists every problem and changes nothing', () => {
  it('POST /api/messages', async () => {
    const res = await call('POST', '/api/messages', { channel: 'Bad/Name', user_id: '', text: 5, extra: true });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('invalid message');
    expect(res.body.problems).toEqual(
      expect.arrayContaining([
        { path: '/channel', message: 'channel must match ^[a-z0-9][a-z0-9_-]{0,63}$' },
        { path: '/user_id', message: 'user_id must be a non-empty string' },
        { path: '/text', message: 'text must be a string, got 5' },
        { path: '/extra', message: 'unknown field "extra"' },
      ]),
    );
    expect(res.body.problems).toHaveLength(4);
    const missing = await call('POST', '/api/messages', { channel: 'web' });
    expect(missing.body.problems).toEqual([
      { path: '/user_id', message: 'user_id is required' },
      { path: '/text', message: 'text is required' },
    ]);
    expect(messages).toEqual([]);
  });

  it('a string where a boolean belongs is refused, not coerced', async () => {
    const res = await call('POST', '/api/messages', { channel: 'web', user_id: 'ann', text: 'hi', async: 'true' });
    expect(res.status).toBe(400);
    expect(res.body.problems).toEqual([{ path: '/async', message: 'async must be a boolean, got "true"' }]);
    const numeric = await call('POST', '/api/messages', { channel: 'web', user_id: 'ann', text: 7 });
    expect(numeric.body.problems).toEqual([{ path: '/text', message: 'text must be a string, got 7' }]);
    expect(messages).toEqual([]);
  });

  it('PUT and POST /api/profiles/:user, and a bad user id in the path', async () => {
    profiles.set('ann', { city: 'Oslo' });
    const put = await call('PUT', '/api/profiles/ann', { profile: { 'bad key': 1, ok: 2 }, colour: 'red' });
    expect(put.status).toBe(400);
    expect(put.body.message).toBe('invalid profile');
    expect(put.body.problems).toEqual(
      expect.arrayContaining([
        { path: '/colour', message: 'unknown field "colour"' },
        { path: '/profile/bad key', message: 'profile key "bad key" must match ^[A-Za-z0-9_.-]{1,64}$' },
      ]),
    );
    const notObject = await call('PUT', '/api/profiles/ann', { profile: 'nope' });
    expect(notObject.body.problems).toEqual([{ path: '/profile', message: 'profile must be an object, got "nope"' }]);
    const post = await call('POST', '/api/profiles/ann', { set: { city: 'Bergen' }, unset: [3] });
    expect(post.status).toBe(400);
    expect(post.body.message).toBe('invalid profile update');
    expect(post.body.problems).toEqual([{ path: '/unset/0', message: 'unset/0 must be a string, got 3' }]);
    const badUser = await call('GET', '/api/profiles/no%20spaces');
    expect(badUser.status).toBe(400);
    expect(badUser.body.message).toBe('invalid user id');
    expect(badUser.body.problems).toEqual([{ path: '/user', message: 'user must match ^[A-Za-z0-9_.@-]{1,128}$' }]);
    expect(profiles.get('ann')).toEqual({ city: 'Oslo' });
    expect((await call('POST', '/api/profiles/ann', { set: { city: 'Bergen' } })).status).toBe(200);
    expect(profiles.get('ann')).toEqual({ city: 'Bergen' });
  });

  it('POST /api/credentials and POST /api/users', async () => {
    const credential = await call('POST', '/api/credentials', { name: 'Lamp', role: 'wizard', channels: 'web' });
    expect(credential.status).toBe(400);
    expect(credential.body.message).toBe('invalid credential request');
    expect(credential.body.problems).toEqual(
      expect.arrayContaining([
        { path: '/name', message: 'name must match ^[a-z0-9][a-z0-9_-]{0,63}$' },
        { path: '/role', message: 'role must be one of plugin, channel, admin, zigbee2mqtt, caller' },
        { path: '/channels', message: 'channels must be an array, got "web"' },
      ]),
    );
    expect((await call('POST', '/api/credentials', { role: 'plugin' })).body.problems).toEqual([{ path: '/name', message: 'name is required' }]);
    expect(credentialsAdded).toEqual([]);
    const user = await call('POST', '/api/users', { user_id: 'ann', admin: true });
    expect(user.status).toBe(400);
    expect(user.body.problems).toEqual([{ path: '/admin', message: 'unknown field "admin"' }]);
    expect(usersAdded).toEqual([]);
    expect((await call('POST', '/api/credentials', { name: 'lamp', role: 'plugin' })).status).toBe(201);
    expect(credentialsAdded).toEqual(['lamp']);
  });
});

describe('query strings are coerced from text', () => {
  it('?k=5 is the number 5; k=0 and k=abc are refused naming k', async () => {
    expect((await call('GET', '/api/plugins/search?q=lights&k=5')).status).toBe(200);
    expect(searches.at(-1)).toEqual({ q: 'lights', options: { include_unroutable: false, k: 5 } });
    const zero = await call('GET', '/api/plugins/search?q=lights&k=0');
    expect(zero.status).toBe(400);
    expect(zero.body.problems).toEqual([{ path: '/k', message: 'k must be at least 1, got 0' }]);
    const text = await call('GET', '/api/plugins/search?q=lights&k=abc');
    expect(text.body.problems).toEqual([{ path: '/k', message: 'k must be a whole number, got "abc"' }]);
    expect(searches).toHaveLength(1);
  });
});

describe('the OpenAPI document shows the schemas that validate', () => {
  const plain = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema));
  const requestSchema = (path: string, method: string): unknown => {
    const doc = openApiDocument(server.app) as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>> };
    return doc.paths[path]?.[method]?.requestBody?.content['application/json']?.schema;
  };

  it('requestBody of each converted route is its validating schema', () => {
    expect(requestSchema('/api/messages', 'post')).toEqual(plain(MessageBody));
    expect(requestSchema('/api/profiles/{user}', 'put')).toEqual(plain(ProfileReplace));
    expect(requestSchema('/api/profiles/{user}', 'post')).toEqual(plain(ProfileUpdate));
    expect(requestSchema('/api/credentials', 'post')).toEqual(plain(CredentialRequest));
    expect(requestSchema('/api/users', 'post')).toEqual(plain(UserRequest));
  });

  it('query parameters come from the route schema, and operation ids and responses from the descriptions', () => {
    const doc = openApiDocument(server.app) as {
      paths: Record<string, Record<string, { operationId: string; parameters: { name: string; in: string; schema: unknown }[]; responses: object }>>;
    };
    const search = doc.paths['/api/plugins/search']?.['get'];
    expect(search?.operationId).toBe('searchPlugins');
    const k = search?.parameters.find((p) => p.name === 'k');
    const { description: _d, ...kSchema } = plain(SearchQueryString.properties.k) as Record<string, unknown>;
    expect(k).toMatchObject({ in: 'query', schema: kSchema });
    expect(Object.keys(search?.responses ?? {})).toContain('400');
  });
});

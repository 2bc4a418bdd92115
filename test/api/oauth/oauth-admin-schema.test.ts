// The OAuth administration routes validated by their schemas on the real HTTP server: unknown fields and
// wrong types are refused with field-named problems before any client is added or grant revoked, the
// store still names what is wrong with a client's name or redirect URIs, and the document shows the schemas.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OAuthClientStore } from '../../../src/access/oauth-clients.js';
import type { OAuthGrantStore } from '../../../src/access/oauth-grants.js';
import { OAuthClientRequest, RevokeGrantsRequest } from '../../../src/api/oauth/admin-schema.js';
import { registerOAuthAdminRoutes } from '../../../src/api/oauth/admin-routes.js';
import type { OAuthContext } from '../../../src/api/oauth/context.js';
import { openApiDocument } from '../../../src/api/openapi.js';
import { createHttpServer, type HttpServer } from '../../../src/api/server.js';
import { silentLogger } from '../../../src/log.js';

const TOKEN = 'oauth-admin-schema-token';
let server: HttpServer;
const added: unknown[] = [];
const revoked: unknown[] = [];

async function post(url: string, payload: unknown) {
  const res = await server.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    payload: JSON.stringify(payload),
  });
  return { status: res.statusCode, body: res.json() as { message: string; problems: { path: string; message: string }[] } };
}

beforeAll(async () => {
  server = createHttpServer({ host: '127.0.0.1', port: 0, token: TOKEN, log: silentLogger() });
  const clients = {
    list: () => [],
    add: (input: unknown) => {
      added.push(input);
      return { client: { client_id: 'hcc_1', name: 'x', redirect_uris: [] }, client_secret: 's' };
    },
  } as unknown as OAuthClientStore;
  const grants = {
    revoke: (what: unknown) => {
      revoked.push(what);
      return 0;
    },
  } as unknown as OAuthGrantStore;
  registerOAuthAdminRoutes(server.app, { clients, grants, log: silentLogger() } as unknown as OAuthContext);
  await server.app.ready();
});

afterAll(async () => {
  await server?.close();
});

describe('OAuth administration bodies', () => {
  it('refuses unknown fields and wrong types, adding and revoking nothing', async () => {
    const client = await post('/api/oauth/clients', { name: 'ha', redirect_uris: 'https://ha.example/cb', scope: 'mcp' });
    expect(client.status).toBe(400);
    expect(client.body.message).toBe('invalid OAuth client');
    expect(client.body.problems).toEqual([
      { path: '/scope', message: 'unknown field "scope"' },
      { path: '/redirect_uris', message: 'redirect_uris must be an array, got "https://ha.example/cb"' },
    ]);
    const revoke = await post('/api/oauth/tokens/revoke', { user_id: 'not a user!', all: 'true' });
    expect(revoke.status).toBe(400);
    expect(revoke.body.problems).toEqual([
      { path: '/user_id', message: 'user_id must match ^[A-Za-z0-9_.@-]{1,128}$' },
      { path: '/all', message: 'all must be a boolean, got "true"' },
    ]);
    expect((await post('/api/oauth/tokens/revoke', {})).body.message).toBe('say what to revoke: client, user_id, or "all": true');
    expect(added).toEqual([]);
    expect(revoked).toEqual([]);
    expect((await post('/api/oauth/tokens/revoke', { all: true })).status).toBe(200);
    expect(revoked).toEqual([{ all: true }]);
  });

  it('the document shows the validating schemas', () => {
    const doc = openApiDocument(server.app) as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>> };
    const body = (path: string) => doc.paths[path]?.['post']?.requestBody?.content['application/json']?.schema;
    expect(body('/api/oauth/clients')).toEqual(JSON.parse(JSON.stringify(OAuthClientRequest)));
    expect(body('/api/oauth/tokens/revoke')).toEqual(JSON.parse(JSON.stringify(RevokeGrantsRequest)));
  });
});

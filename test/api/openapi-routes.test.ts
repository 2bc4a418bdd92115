// How routes get their OpenAPI description on a bare server: described routes are documented without
// their answers changing, undescribed ones stay out of the document, and a route with a schema of its own
// keeps fastify's validation behind the bearer check, answered in the server's error body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/api/openapi.js';
import { registerOpenApiRoute } from '../../src/api/routes/openapi.js';
import { createHttpServer, type HttpServer } from '../../src/api/server.js';
import { silentLogger } from '../../src/log.js';

const TOKEN = 'openapi-routes-admin-token';
let server: HttpServer;
let url: string;

const post = (path: string, body: string, token?: string) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body });

beforeAll(async () => {
  server = createHttpServer({ host: '127.0.0.1', port: 0, token: TOKEN, log: silentLogger() });
  // Described in openapi-paths.ts: documented, and still answered by the handler alone (no schema check).
  server.app.post('/api/plugins/unregister', async (request) => ({ echoed: request.body }));
  // Not described anywhere: served, but left out of the document.
  server.app.get('/api/undocumented', async () => ({ ok: true }));
  // A schema of its own: fastify validates it, after authentication.
  server.app.post(
    '/api/validated',
    { schema: { body: { type: 'object', required: ['n'], properties: { n: { type: 'integer', minimum: 1 } } } } },
    async (request) => ({ got: request.body }),
  );
  registerOpenApiRoute(server.app);
  url = (await server.listen()).url;
});

afterAll(async () => {
  await server?.close();
});

describe('route documentation', () => {
  it('documents a described route without checking its body against the description', async () => {
    const doc = openApiDocument(server.app) as { paths: Record<string, Record<string, { operationId?: string }>> };
    expect(doc.paths['/api/plugins/unregister']?.['post']?.operationId).toBe('unregisterPlugin');
    // The description requires plugin_id; the handler, not the schema, decides what to answer.
    const res = await post('/api/plugins/unregister', '{"something":"else"}', TOKEN);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ echoed: { something: 'else' } });
  });

  it('leaves an undescribed route out of the document but serves it', async () => {
    const doc = (await (await fetch(`${url}/api/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(doc.paths['/api/undocumented']).toBeUndefined();
    expect(doc.paths['/api/validated']).toBeDefined();
    expect((await fetch(`${url}/api/undocumented`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it('validates a route schema of its own after the bearer check, in the server error body', async () => {
    expect((await post('/api/validated', '{"n":0}')).status).toBe(401);
    const bad = await post('/api/validated', '{"n":0}', TOKEN);
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as { statusCode: number; problems: { path: string; message: string }[] };
    expect(body.statusCode).toBe(400);
    expect(body.problems).toEqual([{ path: '/n', message: 'n must be at least 1, got 0' }]);
    expect((await post('/api/validated', '{"n":2}', TOKEN)).status).toBe(200);
  });
});

// The plugin routes whose input is not a descriptor (unregister, transfer, a direct tool run) on the real
// HTTP server: refused input is listed problem by problem and reaches neither registry nor dispatcher;
// a run without a body still runs with no parameters, and ?confirmed is read from text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerPluginRoutes } from '../../../src/api/routes/plugins.js';
import {
  CapabilityParams,
  RegistrationEnvelope,
  RunQueryString,
  ToolParameters,
  TransferRequest,
  UnregisterRequest,
} from '../../../src/api/routes/plugins-schema.js';
import { openApiDocument } from '../../../src/api/openapi.js';
import { createHttpServer, type HttpServer } from '../../../src/api/server.js';
import type { DispatcherApi, InvokeOptions } from '../../../src/dispatch/dispatcher-api.js';
import type { RegistryApi } from '../../../src/registry/registry-api.js';
import { silentLogger } from '../../../src/log.js';

const TOKEN = 'plugin-route-schemas-token';
let server: HttpServer;
const invoked: InvokeOptions[] = [];
const unregistered: string[] = [];
const transferred: string[] = [];

async function call(url: string, payload?: unknown) {
  const res = await server.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${TOKEN}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
  });
  return { status: res.statusCode, body: res.json() as { message: string; problems: { path: string; message: string }[] } };
}

beforeAll(async () => {
  server = createHttpServer({ host: '127.0.0.1', port: 0, token: TOKEN, log: silentLogger() });
  const registry = {
    get: () => undefined,
    list: () => [],
    unregister: (id: string) => {
      unregistered.push(id);
      return { ok: true };
    },
  } as unknown as RegistryApi;
  const dispatcher = {
    invoke: async (options: InvokeOptions) => {
      invoked.push(options);
      return { request_id: 'r', success: true, result: {} };
    },
  } as unknown as DispatcherApi;
  registerPluginRoutes(server.app, {
    registry,
    dispatcher,
    health: async () => ({ ok: true }),
    transfer: (id, credential) => {
      transferred.push(`${id}→${credential}`);
      return { ok: true, owner: credential, previous_owner: 'x' };
    },
  });
  await server.app.ready();
});

afterAll(async () => {
  await server?.close();
});

describe('plugin routes validated by their schemas', () => {
  it('unregister and transfer refuse bad input and touch nothing', async () => {
    const bad = await call('/api/plugins/unregister', { plugin_id: 42 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ message: 'invalid plugin_id', problems: [{ path: '/plugin_id', message: 'plugin_id must be a string, got 42' }] });
    const transfer = await call('/api/plugins/Lamp/transfer', { credential: '' });
    expect(transfer.status).toBe(400);
    expect(transfer.body.problems).toEqual([{ path: '/id', message: 'id must match ^[a-z0-9][a-z0-9_-]{0,63}$' }]);
    const body = await call('/api/plugins/lamp/transfer', {});
    expect(body.body).toMatchObject({ message: expect.stringContaining('credential'), problems: [{ path: '/credential', message: 'credential is required' }] });
    expect(unregistered).toEqual([]);
    expect(transferred).toEqual([]);
    expect((await call('/api/plugins/lamp/transfer', { credential: 'lamp-new' })).status).toBe(200);
    expect(transferred).toEqual(['lamp→lamp-new']);
  });

  it('a run takes no body as no parameters, refuses a body that is not an object and a bad ?confirmed', async () => {
    expect((await call('/v1/plugins/lamp/tools/on/run')).status).toBe(200);
    expect(invoked.at(-1)).toMatchObject({ plugin_id: 'lamp', capability_id: 'on', parameters: {}, confirmed: false });
    const list = await call('/v1/plugins/lamp/tools/on/run', [1, 2]);
    expect(list.status).toBe(400);
    expect(list.body.problems).toEqual([{ path: '', message: 'the body must be an object' }]);
    const maybe = await call('/v1/plugins/lamp/tools/on/run?confirmed=maybe', { level: 3 });
    expect(maybe.status).toBe(400);
    expect(maybe.body.problems).toEqual([{ path: '/confirmed', message: 'confirmed must be one of true, 1, false, 0' }]);
    expect(invoked).toHaveLength(1);
    expect((await call('/v1/plugins/lamp/tools/on/run?confirmed=1', { level: 3 })).status).toBe(200);
    expect(invoked.at(-1)).toMatchObject({ parameters: { level: 3 }, confirmed: true });
  });

  it('a malformed plugin or capability id in the path is refused naming it', async () => {
    const get = await server.app.inject({ method: 'GET', url: '/api/plugins/Not%20An%20Id', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(get.statusCode).toBe(400);
    expect(get.json()).toMatchObject({ message: 'invalid plugin id', problems: [{ path: '/id', message: 'id must match ^[a-z0-9][a-z0-9_-]{0,63}$' }] });
    const run = await call('/v1/plugins/lamp/tools/no%20such/run', {});
    expect(run.status).toBe(400);
    expect(run.body.problems).toEqual([{ path: '/tool', message: 'tool must match ^[A-Za-z0-9_-]{1,64}$' }]);
    expect(invoked).toHaveLength(2);
    const missing = await server.app.inject({ method: 'GET', url: '/api/plugins/nosuch', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(missing.statusCode).toBe(404);
  });

  it('the document shows the schemas that validate', () => {
    const doc = openApiDocument(server.app) as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: unknown }> }; parameters?: { name: string; schema: unknown }[] }>
      >;
    };
    const body = (path: string) => doc.paths[path]?.['post']?.requestBody?.content['application/json']?.schema;
    const plain = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema));
    expect(body('/api/plugins/unregister')).toEqual(plain(UnregisterRequest));
    expect(body('/api/plugins/{id}/transfer')).toEqual(plain(TransferRequest));
    const run = doc.paths['/v1/plugins/{id}/tools/{tool}/run']?.['post']?.requestBody as { required?: boolean; content: Record<string, { schema: unknown }> };
    expect(run).toMatchObject({ required: false, content: { 'application/json': { schema: plain(ToolParameters) } } });
    const confirmed = doc.paths['/v1/plugins/{id}/tools/{tool}/run']?.['post']?.parameters?.find((p) => p.name === 'confirmed');
    const { description: _d, ...schema } = plain(RunQueryString.properties.confirmed) as Record<string, unknown>;
    expect(confirmed?.schema).toEqual(schema);
    const tool = doc.paths['/v1/plugins/{id}/tools/{tool}/run']?.['post']?.parameters?.find((p) => p.name === 'tool');
    const { description: _t, ...toolSchema } = plain(CapabilityParams.properties.tool) as Record<string, unknown>;
    expect(tool?.schema).toEqual(toolSchema);
  });

  it('a registration names a bad adapter type or heartbeat through the envelope schema the document shows', async () => {
    const refused = await call('/api/plugins/register', { id: 'fan', name: 'Fan', description: 'A fan.', type: 'ftp', heartbeat_interval_sec: 0 });
    expect(refused.status).toBe(400);
    expect(refused.body.problems).toEqual(
      expect.arrayContaining([
        { path: '/type', message: 'type must be one of http, subprocess, mcp, mqtt' },
        { path: '/heartbeat_interval_sec', message: 'heartbeat_interval_sec must be > 0, got 0' },
      ]),
    );
    expect(refused.body.problems.filter((problem) => problem.path === '/type')).toHaveLength(1);
    const doc = openApiDocument(server.app) as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };
    const documented = JSON.parse(JSON.stringify(doc.components.schemas['RegisterPluginRequest']?.properties)) as Record<string, unknown>;
    expect(documented['type']).toEqual(JSON.parse(JSON.stringify(RegistrationEnvelope.properties.type)));
    expect(documented['heartbeat_interval_sec']).toEqual(JSON.parse(JSON.stringify(RegistrationEnvelope.properties.heartbeat_interval_sec)));
  });
});

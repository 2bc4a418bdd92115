// The OpenAPI document against the real Core: every route fastify serves is described (and nothing
// else), the document is OpenAPI 3.1 with resolvable $refs, and real answers match its schemas.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describedPaths } from '../../src/api/openapi.js';
import { SCHEMA_NAMES } from '../../src/protocol/schemas.js';
import { startTestCore, type TestCore } from '../helpers/core.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type Doc = Record<string, unknown> & {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
};

let core: TestCore;
let doc: Doc;
let ajv: Ajv2020;

/**
 * Routes from fastify's own route tree (printRoutes without common prefixes: 4 columns per level). A
 * node's text starts after its branch mark; under a route at "/" the children print without their
 * leading slash, so the path is the concatenation of the texts down the tree.
 */
function fastifyRoutes(tree: string): { method: string; path: string }[] {
  const stack: string[] = [];
  const routes: { method: string; path: string }[] = [];
  for (const line of tree.split('\n')) {
    const mark = line.search(/[├└]── /);
    if (mark < 0) continue;
    const start = mark + 4;
    const depth = Math.floor(start / 4);
    const match = /^(\S+)(?: \(([A-Z, ]+)\))?/.exec(line.slice(start));
    if (!match) continue;
    stack.length = depth;
    stack.push(match[1]!);
    const path = stack.join('');
    for (const method of (match[2] ?? '')
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean))
      routes.push({ method, path });
  }
  return routes;
}

const toOpenApiPath = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function resolvePointer(root: unknown, ref: string): unknown {
  expect(ref.startsWith('#/'), `$ref ${ref} is local`).toBe(true);
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function collectRefs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) collectRefs(item, out);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') out.push(value);
      else collectRefs(value, out);
    }
  }
  return out;
}

function validatorFor(component: string): ValidateFunction {
  return ajv.compile({ $ref: `openapi.json#/components/schemas/${component}` });
}

beforeAll(async () => {
  core = await startTestCore();
  const res = await fetch(`${core.httpUrl}/api/openapi.json`); // no token: the document is public
  expect(res.status).toBe(200);
  doc = (await res.json()) as Doc;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi.json');
});

afterAll(async () => {
  await core?.cleanup();
});

describe('GET /api/openapi.json', () => {
  it('describes every route the Core serves, and only those', () => {
    const routes = fastifyRoutes(core.ctx.http.app.printRoutes({ commonPrefix: false }));
    expect(routes.length).toBeGreaterThan(15);
    expect(routes).toContainEqual({ method: 'POST', path: '/v1/plugins/:id/tools/:tool/run' });
    expect(routes).toContainEqual({ method: 'GET', path: '/api/plugins/health/:id' });
    expect(routes).toContainEqual({ method: 'DELETE', path: '/mcp' });
    const missing: string[] = [];
    for (const { method, path } of routes) {
      // The dashboard's file tree (/assets/*) serves files, not API operations; GET / is described.
      if (path.endsWith('*')) continue;
      const item = doc.paths[toOpenApiPath(path)];
      const m = method.toLowerCase();
      // fastify answers HEAD for every GET route by itself.
      const described = item && (item[m] !== undefined || (m === 'head' && item['get'] !== undefined));
      if (!described) missing.push(`${method} ${path}`);
    }
    expect(missing).toEqual([]);
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item).filter((k) => HTTP_METHODS.includes(k))) {
        const url = path.replace(/\{([^}]+)\}/g, ':$1');
        expect(core.ctx.http.app.hasRoute({ method: method.toUpperCase() as 'GET', url }), `${method} ${path} exists`).toBe(true);
      }
    }
  });

  it('is an OpenAPI 3.1 document with operations, path parameters and bearer security', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc['info']).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    expect(doc.components.securitySchemes['bearer']).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(doc['security']).toEqual([{ bearer: [] }]);
    expect(doc.paths['/api/openapi.json']!['get']).toMatchObject({ security: [] });
    const operationIds = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      expect(path.startsWith('/')).toBe(true);
      const shared = (item['parameters'] ?? []) as { name: string; in: string }[];
      for (const method of Object.keys(item).filter((k) => HTTP_METHODS.includes(k))) {
        const op = item[method] as { operationId: string; responses: Record<string, unknown>; parameters?: { name: string; in: string; required?: boolean }[] };
        expect(op.operationId, `${method} ${path}`).toEqual(expect.any(String));
        expect(operationIds.has(op.operationId)).toBe(false);
        operationIds.add(op.operationId);
        expect(Object.keys(op.responses).length).toBeGreaterThan(0);
        for (const code of Object.keys(op.responses)) expect(code).toMatch(/^[1-5]\d\d$/);
        const declared = [...shared, ...(op.parameters ?? [])];
        for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
          expect(
            declared.find((p) => p.in === 'path' && p.name === name),
            `${method} ${path} declares {${name}}`,
          ).toMatchObject({ required: true });
        }
      }
    }
  });

  it('shares the protocol schemas and resolves every $ref inside the document', () => {
    for (const name of SCHEMA_NAMES) {
      const component = doc.components.schemas[name] as Record<string, unknown>;
      expect(component, name).toBeDefined();
      expect(component['$id']).toBeUndefined();
      expect(component['x-schema-id']).toBe(`https://homeclaw-bus.dev/schemas/${name}.schema.json`);
    }
    const refs = collectRefs(doc);
    expect(refs.length).toBeGreaterThan(50);
    const unresolved = refs.filter((ref) => resolvePointer(doc, ref) === undefined);
    expect(unresolved).toEqual([]);
    // Every component compiles as JSON Schema 2020-12 with its references resolved.
    for (const name of Object.keys(doc.components.schemas)) expect(() => validatorFor(name), name).not.toThrow();
  });

  it('describes what the Core really answers', async () => {
    const check = (component: string, value: unknown): void => {
      const validate = validatorFor(component);
      expect(validate(value), `${component}: ${JSON.stringify(validate.errors)}`).toBe(true);
    };
    const register = await core.api('POST', '/api/plugins/register', {
      id: 'lamp',
      name: 'Lamp',
      description: 'Switches the lamp.',
      type: 'subprocess',
      config: { command: process.execPath, args: ['-e', 'process.stdout.write(JSON.stringify({success:true,text:"on"}))'], api_token: 's3cret' },
      capabilities: [{ id: 'switch', name: 'Switch', description: 'Turns it on.', parameters: [{ name: 'on', type: 'boolean', required: false }] }],
    });
    expect(register.status).toBe(201);
    check('RegisterPluginResponse', register.body);
    check('PluginList', (await core.api('GET', '/api/plugins')).body);
    const view = await core.api<{ config: Record<string, unknown> }>('GET', '/api/plugins/lamp');
    expect(view.body.config['api_token']).toBe('[redacted]');
    check('PluginView', view.body);
    check('ForgeSytePluginList', (await core.api('GET', '/v1/plugins')).body);
    check('PluginHealth', (await core.api('GET', '/api/plugins/health/lamp')).body);
    check('plugin-result', (await core.api('POST', '/v1/plugins/lamp/tools/switch/run', { on: true })).body);
    check('CoreStatus', (await core.api('GET', '/api/status')).body);
    check('Liveness', await (await fetch(`${core.httpUrl}/healthz`)).json());
    check('Readiness', await (await fetch(`${core.httpUrl}/readyz`)).json());
    const bad = await core.api('POST', '/api/plugins/register', { type: 'carrier-pigeon' });
    expect(bad.status).toBe(400);
    check('ErrorBody', bad.body);
    // A document-level check: the register schema itself refuses what the Core refuses.
    expect(validatorFor('RegisterPluginRequest')({ type: 'subprocess', name: 'x', description: 'y', config: {} })).toBe(false);
    const unauthorized = await fetch(`${core.httpUrl}/api/plugins`);
    check('ErrorBody', await unauthorized.json());
  });

  it("documents without changing answers: a bad body without a token gets 401, with one the handler's own 400", async () => {
    const noToken = await fetch(`${core.httpUrl}/api/plugins/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"type":"carrier-pigeon"}',
    });
    expect(noToken.status).toBe(401);
    const bad = await core.api<{ problems: { path: string; message: string }[] }>('POST', '/api/plugins/unregister', { plugin_id: 42 });
    expect(bad.status).toBe(400);
    expect(bad.body.problems.length).toBeGreaterThan(0);
    expect(bad.body.problems.every((p) => typeof p.path === 'string' && typeof p.message === 'string')).toBe(true);
  });

  it('is produced from the registered routes: every description belongs to a route the Core has', () => {
    // A description whose route is gone would silently drop out of the document; it must not linger.
    const served = new Set(
      Object.entries(doc.paths).flatMap(([path, item]) =>
        Object.keys(item)
          .filter((k) => HTTP_METHODS.includes(k))
          .map((m) => `${m} ${path}`),
      ),
    );
    const described = Object.entries(describedPaths()).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((k) => HTTP_METHODS.includes(k))
        .map((m) => `${m} ${path}`),
    );
    expect(described.filter((operation) => !served.has(operation))).toEqual([]);
    expect(described.length).toBe(served.size);
  });
});

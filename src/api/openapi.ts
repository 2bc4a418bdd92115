// The OpenAPI 3.1 document of the Core's HTTP API, produced by @fastify/swagger from the routes the
// server really has. Each route gets its `schema` (operation id, parameters, body, responses) from the
// descriptions of openapi-paths.ts and its siblings when it is registered; a route without one is left
// out of the document (a test requires every route to have one).
//
// The request schemas a route declares itself (body, querystring, params; see route-validation.ts) are
// the ones fastify validates with, and the document shows exactly those: one schema per input, no copy.
// The descriptions add what a schema cannot say (operation id, summary, responses) and document the
// inputs of routes that declare no schema of their own; such descriptions only document.
import { fastifySwagger } from '@fastify/swagger';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import type { JsonObject, JsonValue } from '../protocol/types.js';
import { accessPaths } from './openapi-access.js';
import { openApiSchemas } from './openapi-components.js';
import { dashboardPaths } from './openapi-dashboard.js';
import { frontDoorPaths } from './openapi-front-doors.js';
import { corePaths, errorResponses } from './openapi-paths.js';
import { packageVersion } from '../kit/package-version.js';
import { routeValidatorCompiler, VALIDATED_PARTS } from './route-validation.js';

export interface OpenApiOptions {
  /** info.version; default the package version. */
  version?: string;
}

export { openApiSchemas } from './openapi-components.js';

/** The document's parts that belong to no route. */
function documentFrame(version: string): JsonObject {
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'HomeClaw Bus Core HTTP API',
      version,
      description:
        'Plugin registration, listing, health and direct invocation; user messages; MQTT credentials; profiles; ' +
        'the Core as an MCP server (/mcp). Payload schemas are those of the MQTT topics (topics/schemas). ' +
        'Authenticate with "Authorization: Bearer <token>" (HOMECLAW_ADMIN_TOKEN or <data dir>/admin.token).',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    security: [{ bearer: [] }],
    tags: [
      { name: 'plugins', description: 'Registration, listing, health and invocation of plugins.' },
      { name: 'conversation', description: 'Messages and user profiles.' },
      { name: 'admin', description: 'MQTT credentials.' },
      { name: 'mcp', description: 'The Core as an MCP server (streamable HTTP).' },
      { name: 'openai', description: 'The OpenAI-compatible endpoint (model homeclaw).' },
      { name: 'oauth', description: 'OAuth 2.1 for /mcp: metadata, consent, tokens, revocation, registration.' },
      { name: 'meta', description: 'Status and this document.' },
    ],
  };
}

const SECURITY_SCHEMES: JsonObject = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description:
      'The admin token of the Core, or a user token (homeclaw users add <id>), which may call only POST /api/messages, GET/PUT/POST /api/profiles/<own id>, GET /api/plugins/search, GET /api/whoami, POST /v1/chat/completions, GET /v1/models and /mcp, acting as its user; other routes answer 403. On /mcp an OAuth access token works too (see /.well-known/oauth-protected-resource/mcp).',
  },
};

/** Every described path item, keyed by OpenAPI path ({id} for fastify's :id). */
export function describedPaths(): Record<string, JsonObject> {
  const merged: Record<string, JsonObject> = {};
  for (const part of [corePaths(), accessPaths(), dashboardPaths(), frontDoorPaths()]) {
    for (const [path, item] of Object.entries(part)) merged[path] = { ...(merged[path] ?? {}), ...item };
  }
  return merged;
}

type Parameter = { name: string; in: string; required?: boolean; description?: string; schema?: JsonObject };

/** A $ref into components.schemas replaced by its target, so a parameter keeps its own description. */
function inlineRef(schema: JsonObject, schemas: Record<string, JsonObject>): JsonObject {
  const target = schema['$ref'];
  if (typeof target !== 'string' || !target.startsWith('#/components/schemas/')) return schema;
  const [name, ...pointer] = target.slice('#/components/schemas/'.length).split('/');
  let node: JsonValue | undefined = schemas[name ?? ''];
  for (const key of pointer) node = node && typeof node === 'object' && !Array.isArray(node) ? node[key] : undefined;
  if (!node || typeof node !== 'object' || Array.isArray(node)) throw new Error(`OpenAPI reference ${target} does not resolve`);
  const { $ref: _ref, ...rest } = schema;
  return { ...node, ...rest };
}

function parameterGroup(parameters: Parameter[], where: string, schemas: Record<string, JsonObject>): JsonObject | undefined {
  const list = parameters.filter((p) => p.in === where);
  if (list.length === 0) return undefined;
  const properties: JsonObject = {};
  for (const p of list)
    properties[p.name] = { ...inlineRef(p.schema ?? { type: 'string' }, schemas), ...(p.description ? { description: p.description } : {}) };
  return { type: 'object', properties, required: list.filter((p) => p.required).map((p) => p.name) };
}

/** One OpenAPI operation (with its path item's shared parameters) as a fastify route schema. */
function routeSchemaOf(pathItem: JsonObject, operation: JsonObject, schemas: Record<string, JsonObject>): FastifySchema {
  const responsesTable = errorResponses();
  const parameters = [...((pathItem['parameters'] ?? []) as Parameter[]), ...((operation['parameters'] ?? []) as Parameter[])];
  const response: JsonObject = {};
  for (const [code, raw] of Object.entries((operation['responses'] ?? {}) as JsonObject)) {
    const target = (raw as JsonObject)['$ref'];
    const resolved = (typeof target === 'string' ? responsesTable[target.slice('#/components/responses/'.length)] : raw) as JsonObject;
    // Without content the response has no body: swagger writes only its description.
    response[code] = resolved['content'] ? resolved : { ...resolved, type: 'null' };
  }
  const requestBody = operation['requestBody'] as JsonObject | undefined;
  const schema: JsonObject = {
    ...Object.fromEntries(
      ['operationId', 'summary', 'description', 'tags', 'security'].filter((k) => k in operation).map((k) => [k, operation[k] as JsonValue]),
    ),
    response,
  };
  const groups: [string, string][] = [
    ['path', 'params'],
    ['query', 'querystring'],
    ['header', 'headers'],
  ];
  for (const [where, key] of groups) {
    const group = parameterGroup(parameters, where, schemas);
    if (group) schema[key] = group;
  }
  if (requestBody) schema['body'] = { content: requestBody['content'] as JsonValue };
  return schema as FastifySchema;
}

const toOpenApiPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** The route schema that documents `method url`, or undefined when none is described. */
function documentationOf(method: string, url: string, paths: Record<string, JsonObject>, schemas: Record<string, JsonObject>): FastifySchema | undefined {
  const item = paths[toOpenApiPath(url)];
  const operation = item?.[method.toLowerCase()];
  if (!item || !operation || typeof operation !== 'object' || Array.isArray(operation)) return undefined;
  return routeSchemaOf(item, operation, schemas);
}

/** swagger marks every request body required; a described `required: false` is restored. */
function markOptionalBodies(documentPaths: Record<string, JsonObject>, described: Record<string, JsonObject>): void {
  for (const [path, item] of Object.entries(documentPaths)) {
    for (const [method, operation] of Object.entries(item)) {
      const body = (described[path]?.[method] as JsonObject | undefined)?.['requestBody'] as JsonObject | undefined;
      const written = (operation as JsonObject)['requestBody'] as JsonObject | undefined;
      if (body?.['required'] === false && written) written['required'] = false;
    }
  }
}

const passThroughValidator = () => () => true;
const plainJsonSerializer = () => (data: unknown) => JSON.stringify(data);

/**
 * Makes `app` describe its routes: installs @fastify/swagger and attaches to every route registered
 * afterwards the schema described for its method and path. Call right after creating the server, before
 * any route.
 */
export function installOpenApi(app: FastifyInstance): void {
  const paths = describedPaths();
  const schemas = openApiSchemas();
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const documentation = documentationOf(methods[0] === 'HEAD' ? 'GET' : String(methods[0]), route.url, paths, schemas);
    const own = (route.schema ?? {}) as Record<string, unknown>;
    if (!documentation) {
      // Undescribed: a route schema of its own documents and validates; without one the route is left out.
      if (!route.schema) route.schema = { hide: true } as FastifySchema;
      return;
    }
    // The route's own parts (body, querystring, params) validate and are what the document shows for
    // them; the description adds the operation id, summary and responses.
    const validated = new Set<string>(VALIDATED_PARTS.filter((part) => own[part] !== undefined));
    const compile = route.validatorCompiler ?? routeValidatorCompiler;
    route.schema = { ...documentation, ...own } as FastifySchema;
    route.validatorCompiler = (request) => (validated.has(request.httpPart ?? '') ? compile(request) : passThroughValidator());
    route.serializerCompiler = plainJsonSerializer;
  });
  // Installed at once rather than through app.register: the route modules declare their routes right
  // after the server is created, before fastify would load a registered plugin, and swagger collects
  // routes through its own onRoute hook. It only adds hooks and the `swagger` decorator.
  fastifySwagger(
    app,
    {
      openapi: { ...(documentFrame(packageVersion()) as object), components: { securitySchemes: SECURITY_SCHEMES as never } },
      // The components are placed after swagger's pass so their $refs stay exactly as written.
      transformObject: (built) => {
        // swagger's own document types differ per OpenAPI version; this one is plain JSON.
        const document = ('openapiObject' in built ? built.openapiObject : {}) as unknown as JsonObject;
        const components = { ...(document['components'] as JsonObject), schemas, responses: errorResponses() };
        markOptionalBodies(document['paths'] as Record<string, JsonObject>, paths);
        return { ...document, jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema', components } as never;
      },
    },
    (err?: Error) => {
      if (err) throw err;
    },
  );
}

/** The document of the routes `app` has (app must have had installOpenApi before its routes). */
export function openApiDocument(app: FastifyInstance, options: OpenApiOptions = {}): JsonObject {
  const document = (app as unknown as { swagger(): JsonObject }).swagger();
  const info = document['info'] as JsonObject;
  return { ...document, info: { ...info, version: options.version ?? (info['version'] as string) } };
}

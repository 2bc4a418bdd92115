// The OpenAPI description of the routes the web dashboard reads: who am I, the event stream, the last
// outcome of each plugin, a plugin's capability schemas, and the page itself. buildOpenApiDocument merges
// these into its paths.
import type { JsonObject } from '../protocol/types.js';

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonObject): JsonObject => ({ 'application/json': { schema } });
const ok = (description: string, schema: JsonObject): JsonObject => ({ description, content: json(schema) });
const error = (name: string): JsonObject => ({ $ref: `#/components/responses/${name}` });
const op = (operationId: string, summary: string, tags: string[], rest: JsonObject): JsonObject => ({ operationId, summary, tags, ...rest });

export function dashboardSchemas(): Record<string, JsonObject> {
  return {
    Whoami: {
      description: 'Who the request acts as.',
      oneOf: [
        {
          type: 'object',
          required: ['kind', 'via'],
          properties: { kind: { const: 'admin' }, via: { const: 'token' } },
          additionalProperties: false,
        },
        {
          type: 'object',
          description: 'A Home Assistant ingress request from the trusted proxy (dashboard.ingress_proxy).',
          required: ['kind', 'via', 'ingress_path'],
          properties: {
            kind: { const: 'admin' },
            via: { const: 'ingress' },
            ingress_path: { type: 'string' },
            ingress_user: { type: 'string', description: "Home Assistant's user name, when its session names one." },
            ingress_display_name: { type: 'string' },
          },
          additionalProperties: false,
        },
        {
          type: 'object',
          required: ['kind', 'via', 'user_id'],
          properties: { kind: { const: 'user' }, via: { const: 'token' }, user_id: { type: 'string' } },
          additionalProperties: false,
        },
      ],
    },
    PluginCapabilities: {
      type: 'object',
      required: ['plugin_id', 'state', 'capabilities'],
      properties: {
        plugin_id: { type: 'string' },
        state: { enum: ['online', 'stale', 'offline', 'error'] },
        capabilities: {
          type: 'array',
          items: {
            type: 'object',
            required: ['id', 'name', 'description', 'input_schema', 'requires_confirmation'],
            properties: {
              id: { type: 'string' },
              name: { type: 'string' },
              description: { type: 'string' },
              input_schema: { type: 'object', description: 'The JSON Schema the parameters are validated against.' },
              output_schema: { type: 'object' },
              output_description: { type: 'string' },
              requires_confirmation: { type: 'boolean', description: 'A direct invoke needs ?confirmed=true (descriptor or policy).' },
            },
          },
        },
      },
    },
  };
}

export function dashboardPaths(): Record<string, JsonObject> {
  const standard = { '401': error('Unauthorized'), '403': error('Forbidden') };
  return {
    '/': {
      get: op('getDashboard', 'The web dashboard (no token: the page asks for one)', ['meta'], {
        security: [],
        responses: {
          '200': {
            description: 'The dashboard page; its scripts and styles are under /assets/ (content-hashed, cached for a year).',
            content: { 'text/html': { schema: { type: 'string' } } },
          },
          '503': { description: 'The dashboard is not built (run npm run build).', content: { 'text/plain': { schema: { type: 'string' } } } },
        },
      }),
    },
    '/api/whoami': {
      get: op('whoami', 'Who this token (or ingress session) acts as', ['meta'], {
        responses: { '200': ok('The principal.', ref('Whoami')), '401': error('Unauthorized') },
      }),
    },
    '/api/events': {
      get: op('streamEvents', 'The observer events (the MQTT events topics) as server-sent events', ['meta'], {
        responses: {
          '200': {
            description:
              'An endless text/event-stream: first "event: ready" once subscribed, then "event: registry" or "event: invocation" with the JSON of the MQTT event as data, and a comment line as keep-alive.',
            content: { 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...standard,
        },
      }),
    },
    '/api/audit/last': {
      get: op('getLastOutcomes', 'The newest audit entry of each plugin', ['admin'], {
        responses: { '200': ok('One entry per plugin, newest first.', ref('AuditList')), ...standard },
      }),
    },
    '/api/plugins/{id}/capabilities': {
      get: op('getPluginCapabilities', "A plugin's capabilities with their parameter JSON Schemas", ['plugins'], {
        responses: { '200': ok('The capabilities.', ref('PluginCapabilities')), ...standard, '404': error('NotFound') },
      }),
    },
  };
}

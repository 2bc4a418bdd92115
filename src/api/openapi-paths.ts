// What each route of the Core's own API does, in OpenAPI operation form: attached to the fastify route
// of the same method and path as its schema when the route is registered (see openapi.ts), so the
// document lists exactly the routes the server has.
import type { JsonObject } from '../protocol/types.js';

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const protocolRef = (name: string, pointer = ''): JsonObject => ({ $ref: `#/components/schemas/${name}${pointer}` });

const json = (schema: JsonObject): JsonObject => ({ 'application/json': { schema } });
const ok = (description: string, schema: JsonObject): JsonObject => ({ description, content: json(schema) });
const error = (name: string): JsonObject => ({ $ref: `#/components/responses/${name}` });
const body = (schema: JsonObject, description?: string): JsonObject => ({
  required: true,
  ...(description ? { description } : {}),
  content: json(schema),
});

function operation(operationId: string, summary: string, tags: string[], rest: JsonObject): JsonObject {
  return { operationId, summary, tags, ...rest };
}

export function corePaths(): Record<string, JsonObject> {
  const standardErrors = { '400': error('BadRequest'), '401': error('Unauthorized') };
  const mcpSession = {
    name: 'mcp-session-id',
    in: 'header',
    required: false,
    description: 'The session id the Core returned on initialize; required on every request after it.',
    schema: { type: 'string' },
  };
  return {
    '/api/openapi.json': {
      get: operation('getOpenApi', 'This document', ['meta'], {
        security: [],
        responses: { '200': ok('The OpenAPI 3.1 document of the HTTP API.', { type: 'object' }) },
      }),
    },
    '/healthz': {
      get: operation('getLiveness', 'The process answers (no token needed)', ['meta'], {
        security: [],
        responses: { '200': ok('The Core is alive.', ref('Liveness')) },
      }),
    },
    '/readyz': {
      get: operation('getReadiness', 'Whether every part the Core needs is up (no token needed)', ['meta'], {
        security: [],
        responses: { '200': ok('Every part is up.', ref('Readiness')), '503': ok('At least one part is down.', ref('Readiness')) },
      }),
    },
    '/metrics': {
      get: operation('getMetrics', 'Prometheus metrics (the admin token or the metrics token)', ['meta'], {
        description:
          'The Prometheus text exposition format (version 0.0.4). Takes the admin token or metrics.token (HOMECLAW_METRICS_TOKEN), ' +
          'which opens this route only. Absent (404) when metrics.enabled is false.',
        responses: {
          '200': {
            description: 'Every metric with its HELP and TYPE lines.',
            content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } },
          },
          '401': error('Unauthorized'),
        },
      }),
    },
    '/api/status': {
      get: operation('getStatus', 'State of every Core service', ['meta'], {
        responses: { '200': ok('The status snapshot.', ref('CoreStatus')), '401': error('Unauthorized') },
      }),
    },
    '/api/plugins': {
      get: operation('listPlugins', 'Registered plugins (summary)', ['plugins'], {
        responses: { '200': ok('Every plugin, built-in and external.', ref('PluginList')), '401': error('Unauthorized') },
      }),
    },
    '/api/plugins/{id}': {
      get: operation('getPlugin', 'One plugin in canonical form', ['plugins'], {
        responses: {
          '200': ok('The canonical descriptor with its state; secrets redacted.', ref('PluginView')),
          '401': error('Unauthorized'),
          '404': error('NotFound'),
        },
      }),
    },
    '/api/plugins/register': {
      post: operation('registerPlugin', 'Register or update an external plugin (http, subprocess, mcp, or an mqtt device that only heartbeats)', ['plugins'], {
        requestBody: body(ref('RegisterPluginRequest'), 'A plugin descriptor in any accepted dialect.'),
        responses: {
          '200': ok('An existing registration was updated (or unchanged).', ref('RegisterPluginResponse')),
          '201': ok('The plugin was registered.', ref('RegisterPluginResponse')),
          ...standardErrors,
          '409': error('Conflict'),
        },
      }),
    },
    '/api/plugins/unregister': {
      post: operation('unregisterPlugin', 'Remove an external plugin', ['plugins'], {
        responses: {
          '200': ok('The plugin was removed.', ref('UnregisterPluginResponse')),
          ...standardErrors,
          '403': error('Forbidden'),
          '404': error('NotFound'),
        },
      }),
    },
    '/api/plugins/health/{id}': {
      get: operation('checkPluginHealth', "Check a plugin's health now, through its adapter", ['plugins'], {
        responses: { '200': ok('The live check (ok may be false).', ref('PluginHealth')), '401': error('Unauthorized'), '404': error('NotFound') },
      }),
    },
    '/api/plugins/search': {
      get: operation('searchPlugins', 'The plugins that fit a request (hybrid retrieval)', ['plugins'], {
        responses: { '200': ok('The ranked plugins.', ref('SearchResult')), ...standardErrors },
      }),
    },
    '/v1/plugins': {
      get: operation('listPluginsForgeSyte', 'Plugins in the ForgeSyte shape', ['plugins'], {
        responses: { '200': ok('Every plugin with its tools and JSON Schemas.', ref('ForgeSytePluginList')), '401': error('Unauthorized') },
      }),
    },
    '/v1/plugins/{id}/tools/{tool}/run': {
      post: operation('runTool', 'Invoke a capability directly (through the dispatcher)', ['plugins'], {
        // The parameters' schema is the route's own; a run without a body has no parameters.
        requestBody: { required: false },
        responses: {
          '200': ok('The plugin succeeded.', protocolRef('plugin-result')),
          '400': {
            description: 'The body is not an object (ErrorBody) or the parameters are invalid (PluginResult, error_code invalid_params).',
            content: json({ oneOf: [ref('ErrorBody'), protocolRef('plugin-result')] }),
          },
          '401': error('Unauthorized'),
          ...Object.fromEntries(
            [
              ['403', "The caller's policy does not allow it (error_code forbidden); the plugin was sent nothing."],
              ['404', 'No such plugin or capability (error_code not_found).'],
              ['428', 'The capability requires confirmation and the call did not carry "confirmed": true (error_code confirmation_required).'],
              ['429', 'Queue full (error_code busy).'],
              ['502', 'The plugin or its adapter failed (plugin_error, adapter_error).'],
              ['503', 'The plugin is offline or stale, or the call was cancelled.'],
              ['504', 'The deadline passed (error_code timeout).'],
            ].map(([code, description]) => [code, ok(description as string, protocolRef('plugin-result'))]),
          ),
        },
      }),
    },
    '/api/messages': {
      post: operation('postMessage', 'A user message, answered by the conversation engine', ['conversation'], {
        responses: {
          '200': ok('The reply, the same payload as on the channel out topic.', protocolRef('channel-message-out')),
          '400': ok('The body is invalid.', ref('ErrorBody')),
          '401': error('Unauthorized'),
          '429': ok(
            'Too many messages from this user (conversation.max_messages_per_minute); the Retry-After header says when to try again.',
            ref('ErrorBody'),
          ),
        },
      }),
    },
    '/api/credentials': {
      get: operation('listCredentials', 'MQTT credentials (without secrets)', ['admin'], {
        responses: { '200': ok('Every credential.', ref('CredentialList')), '401': error('Unauthorized') },
      }),
      post: operation('addCredential', 'Create an MQTT credential; the password is shown once', ['admin'], {
        responses: { '201': ok('The new credential.', ref('NewCredential')), ...standardErrors },
      }),
    },
    '/api/profiles/{user}': {
      get: operation('getProfile', "A user's profile", ['conversation'], {
        responses: { '200': ok('The profile.', ref('Profile')), ...standardErrors },
      }),
      post: operation('updateProfile', "Set or remove keys of a user's profile", ['conversation'], {
        responses: { '200': ok('The profile after the update.', ref('Profile')), ...standardErrors },
      }),
    },
    '/mcp': {
      parameters: [mcpSession],
      post: operation('mcpPost', 'MCP streamable HTTP: send JSON-RPC messages (the first of a session is initialize)', ['mcp'], {
        requestBody: body(ref('JsonRpcMessage')),
        responses: {
          '200': {
            description: 'JSON-RPC responses, as JSON or as an SSE stream.',
            content: { 'application/json': { schema: ref('JsonRpcMessage') }, 'text/event-stream': { schema: { type: 'string' } } },
          },
          '202': { description: 'Notifications or responses accepted.' },
          '400': ok('No session and not an initialize request, or a malformed message.', ref('JsonRpcError')),
          '401': error('Unauthorized'),
          '404': ok('The session is unknown (expired or closed): initialize again.', ref('JsonRpcError')),
        },
      }),
      get: operation('mcpStream', 'MCP streamable HTTP: open the server-to-client SSE stream of a session', ['mcp'], {
        responses: {
          '200': { description: 'Server notifications (e.g. tools/list_changed).', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          '400': ok('mcp-session-id header missing.', ref('JsonRpcError')),
          '401': error('Unauthorized'),
          '404': ok('The session is unknown.', ref('JsonRpcError')),
        },
      }),
      delete: operation('mcpEndSession', 'MCP streamable HTTP: end a session', ['mcp'], {
        responses: {
          '200': { description: 'The session is closed.' },
          '400': ok('mcp-session-id header missing.', ref('JsonRpcError')),
          '401': error('Unauthorized'),
          '404': ok('The session is unknown.', ref('JsonRpcError')),
        },
      }),
    },
  };
}

export function errorResponses(): JsonObject {
  const entries: [string, string][] = [
    ['BadRequest', 'The request is invalid; every problem is listed with its path.'],
    ['Unauthorized', 'Missing or invalid bearer token.'],
    ['Forbidden', 'The operation is not allowed (e.g. unregistering a built-in plugin).'],
    ['NotFound', 'No such resource.'],
    ['Conflict', 'The id is owned by another plugin (e.g. a built-in).'],
  ];
  return Object.fromEntries(entries.map(([name, description]) => [name, { description, content: json(ref('ErrorBody')) }]));
}

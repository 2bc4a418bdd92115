// The OpenAPI 3.1 document of the Core's HTTP API. Payload schemas are the protocol's JSON Schemas of
// topics/schemas (the MQTT contract), placed under components.schemas, so the HTTP API and the topics
// share one source of truth; only HTTP-specific envelopes are described here.
import { allProtocolSchemas, SCHEMA_FILES, type SchemaName } from '../protocol/schemas.js';
import type { JsonObject, JsonValue } from '../protocol/types.js';
import { accessPaths, accessSchemas } from './openapi-access.js';
import { dashboardPaths, dashboardSchemas } from './openapi-dashboard.js';
import { frontDoorPaths, frontDoorSchemas } from './openapi-front-doors.js';

export interface OpenApiOptions {
  /** info.version; default the package version. */
  version?: string;
}

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const protocolRef = (name: SchemaName, pointer = ''): JsonObject => ({ $ref: `#/components/schemas/${name}${pointer}` });

const FILE_TO_NAME = new Map<string, SchemaName>(Object.entries(SCHEMA_FILES).map(([name, file]) => [file, name as SchemaName]));

/**
 * A protocol schema as an OpenAPI component: $id and $schema dropped (an $id would make every
 * document-relative $ref resolve against the schema's own URL) and each $ref rewritten from
 * "<file>.schema.json#/..." or "#/..." to the component it names.
 */
export function protocolComponent(name: SchemaName, schema: JsonObject): JsonObject {
  const rewrite = (value: JsonValue): JsonValue => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (value === null || typeof value !== 'object') return value;
    const out: JsonObject = {};
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') out[key] = rewriteRef(name, item);
      else out[key] = rewrite(item);
    }
    return out;
  };
  const copy = rewrite(schema) as JsonObject;
  const id = copy['$id'];
  delete copy['$id'];
  delete copy['$schema'];
  if (typeof id === 'string') copy['x-schema-id'] = id;
  return copy;
}

function rewriteRef(owner: SchemaName, target: string): string {
  const hash = target.indexOf('#');
  const file = hash === -1 ? target : target.slice(0, hash);
  const pointer = hash === -1 ? '' : target.slice(hash + 1);
  const base = file.slice(file.lastIndexOf('/') + 1);
  const name = base === '' ? owner : FILE_TO_NAME.get(base);
  if (!name) throw new Error(`protocol schema ${owner} refers to ${target}, which is not a protocol schema`);
  return `#/components/schemas/${name}${pointer}`;
}

// ---- HTTP envelopes -----------------------------------------------------------------------------

function httpSchemas(descriptor: JsonObject, register: JsonObject): Record<string, JsonObject> {
  const descriptorProperties = (descriptor['properties'] ?? {}) as JsonObject;
  const descriptorRequired = Array.isArray(descriptor['required']) ? (descriptor['required'] as string[]) : [];
  const registerProperties = { ...((register['properties'] ?? {}) as JsonObject) };
  // The liveness envelope belongs to MQTT registration; over HTTP the Core polls health instead.
  delete registerProperties['epoch'];
  delete registerProperties['heartbeat_interval_sec'];
  // Registration by reference is how a small device registers itself over MQTT; over HTTP the descriptor comes in the body.
  delete registerProperties['descriptor_url'];
  const pluginState = { enum: ['online', 'stale', 'offline', 'error'] };

  return {
    ErrorBody: {
      type: 'object',
      description: 'Every HTTP failure: the status code and every problem found, each with its path.',
      required: ['statusCode', 'error', 'message', 'problems'],
      properties: {
        statusCode: { type: 'integer', minimum: 400, maximum: 599 },
        error: { type: 'string', description: 'The HTTP reason phrase.' },
        message: { type: 'string' },
        problems: { type: 'array', minItems: 1, items: protocolRef('common', '/$defs/validation_issue') },
      },
      additionalProperties: false,
    },
    RegisterPluginRequest: {
      type: 'object',
      description:
        'An external plugin descriptor in any accepted dialect (HomeClaw, ForgeSyte, RAGFlow; see the register component), ' +
        'with the adapter type (default http). http plugins need config.base_url (or the top-level base_url shorthand; ' +
        'HomeClaw registrations also health_check_url); subprocess plugins config.command (and args); mcp plugins ' +
        'config.command (stdio) or config.transport sse | streamable-http with config.url. A missing one is named in problems. ' +
        "mqtt: a device registered once by an administrator that then only heartbeats; it waits offline until the first " +
        'heartbeat of a client allowed the id, which then owns it.',
      properties: {
        ...registerProperties,
        type: { enum: ['http', 'subprocess', 'mcp', 'mqtt'], default: 'http' },
        heartbeat_interval_sec: { type: 'number', exclusiveMinimum: 0, description: 'mqtt only: how often the device heartbeats.' },
        version: { type: 'string', description: 'Semantic version; "1.0" and "v2" are read as 1.0.0 and 2.0.0 (with a warning).' },
        base_url: { type: 'string', format: 'uri', description: 'Shorthand for config.base_url.' },
        description_long: { type: 'string' },
        examples: { type: 'array', items: { type: 'string' } },
        keywords: { type: 'array', items: { type: 'string' } },
        health_check_url: { type: 'string', format: 'uri' },
        config: protocolRef('descriptor', '/$defs/plugin_config'),
      },
      if: { properties: { type: { const: 'subprocess' } }, required: ['type'] },
      then: { required: ['config'], properties: { config: { required: ['command'] } } },
    },
    RegisterPluginResponse: {
      type: 'object',
      required: ['plugin_id', 'registered', 'change', 'dialect'],
      properties: {
        plugin_id: protocolRef('common', '/$defs/plugin_id'),
        registered: { const: true },
        change: { type: 'string', description: 'created, updated or unchanged.' },
        dialect: { type: 'string', description: 'The descriptor dialect the Core recognised.' },
        warnings: {
          type: 'array',
          description: 'Fields that were ignored or read differently (unknown keys, a short version).',
          items: protocolRef('common', '/$defs/validation_issue'),
        },
      },
    },
    UnregisterPluginRequest: {
      type: 'object',
      required: ['plugin_id'],
      properties: { plugin_id: protocolRef('common', '/$defs/plugin_id') },
    },
    UnregisterPluginResponse: {
      type: 'object',
      required: ['plugin_id', 'unregistered'],
      properties: { plugin_id: protocolRef('common', '/$defs/plugin_id'), unregistered: { const: true } },
    },
    PluginSummary: {
      type: 'object',
      required: ['id', 'name', 'type', 'source', 'state', 'capabilities'],
      properties: {
        id: protocolRef('common', '/$defs/plugin_id'),
        name: { type: 'string' },
        type: protocolRef('common', '/$defs/plugin_type'),
        source: protocolRef('common', '/$defs/plugin_source'),
        state: pluginState,
        state_reason: { type: 'string' },
        version: { type: 'string' },
        capabilities: { type: 'array', items: protocolRef('common', '/$defs/capability_id') },
      },
    },
    PluginList: {
      type: 'object',
      required: ['plugins'],
      properties: { plugins: { type: 'array', items: ref('PluginSummary') } },
    },
    PluginView: {
      type: 'object',
      description: 'The canonical descriptor (see the descriptor component) with its registry state; secrets in config are "[redacted]".',
      required: [...descriptorRequired, 'state', 'registered_at', 'updated_at'],
      properties: {
        ...descriptorProperties,
        state: pluginState,
        state_reason: { type: 'string' },
        registered_at: { type: 'string', format: 'date-time' },
        updated_at: { type: 'string', format: 'date-time' },
      },
      additionalProperties: false,
    },
    ForgeSytePlugin: {
      type: 'object',
      description: 'A plugin in the ForgeSyte shape: tools keyed by capability id.',
      required: ['name', 'description', 'version', 'tools'],
      properties: {
        name: protocolRef('common', '/$defs/plugin_id'),
        description: { type: 'string' },
        version: { type: 'string' },
        tools: {
          type: 'object',
          additionalProperties: {
            type: 'object',
            required: ['description', 'input_schema', 'output_schema'],
            properties: {
              description: { type: 'string' },
              input_schema: {
                type: 'object',
                description:
                  'The parameters as ForgeSyte writes them: a map of parameter name to its JSON Schema; a parameter is ' +
                  'required unless it has a default or says "required": false.',
                additionalProperties: { type: 'object' },
              },
              output_schema: {
                type: 'object',
                description: "The output as a map of field name to JSON Schema (for plugins that declare none: the answer's text).",
              },
            },
          },
        },
      },
    },
    ForgeSytePluginList: {
      type: 'object',
      required: ['plugins'],
      properties: { plugins: { type: 'array', items: ref('ForgeSytePlugin') } },
    },
    PluginHealth: {
      type: 'object',
      required: ['plugin_id', 'ok', 'state'],
      properties: {
        plugin_id: protocolRef('common', '/$defs/plugin_id'),
        ok: { type: 'boolean' },
        state: pluginState,
        detail: { type: 'string' },
      },
    },
    ToolParameters: {
      type: 'object',
      description: "The capability's parameters; validated against its input schema before the plugin is called.",
    },
    SearchResult: {
      type: 'object',
      required: ['query', 'k', 'mode', 'hits'],
      properties: {
        query: { type: 'string' },
        k: { type: 'integer', minimum: 1 },
        mode: { enum: ['hybrid', 'bm25', 'dense'] },
        hits: {
          type: 'array',
          items: {
            type: 'object',
            required: ['plugin_id', 'name', 'description', 'state', 'reason', 'score', 'capabilities'],
            properties: {
              plugin_id: protocolRef('common', '/$defs/plugin_id'),
              name: { type: 'string' },
              description: { type: 'string' },
              state: pluginState,
              reason: { enum: ['ranked', 'pinned', 'forced'] },
              score: { type: 'number' },
              bm25_score: { type: 'number' },
              dense_score: { type: 'number' },
              capabilities: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['capability_id', 'name', 'description', 'score'],
                  properties: {
                    capability_id: protocolRef('common', '/$defs/capability_id'),
                    name: { type: 'string' },
                    description: { type: 'string' },
                    score: { type: 'number' },
                  },
                },
              },
            },
          },
        },
        warnings: { type: 'array', items: { type: 'string' } },
      },
    },
    MessageRequest: {
      description: 'A user message over HTTP: the channel-message-in payload plus the channel it comes from.',
      allOf: [
        protocolRef('channel-message-in'),
        { type: 'object', required: ['channel'], properties: { channel: protocolRef('common', '/$defs/channel_id') } },
      ],
    },
    CredentialRequest: {
      type: 'object',
      required: ['name', 'role'],
      properties: {
        name: protocolRef('common', '/$defs/plugin_id'),
        role: { enum: ['plugin', 'channel', 'admin', 'zigbee2mqtt', 'caller'] },
        plugin_ids: { type: 'array', items: { type: 'string' }, description: 'Plugin ids a plugin credential may act for; default [name].' },
        channels: { type: 'array', items: { type: 'string' }, description: 'Channels a channel credential may act for; default [name].' },
        users: { type: 'array', items: { type: 'string' }, description: 'Users a channel credential may speak as ("*": anyone); default [name]. Channel credentials only.' },
      },
    },
    NewCredential: {
      type: 'object',
      required: ['name', 'password'],
      properties: { name: { type: 'string' }, password: { type: 'string', description: 'Shown once; only its hash is stored.' } },
    },
    CredentialList: {
      type: 'object',
      required: ['credentials'],
      properties: {
        credentials: {
          type: 'array',
          items: {
            type: 'object',
            required: ['name', 'role', 'plugin_ids', 'channels', 'created_at'],
            properties: {
              name: { type: 'string' },
              role: { enum: ['plugin', 'channel', 'admin', 'zigbee2mqtt', 'caller'] },
              plugin_ids: { type: 'array', items: { type: 'string' } },
              channels: { type: 'array', items: { type: 'string' } },
              users: { type: 'array', items: { type: 'string' } },
              created_at: protocolRef('common', '/$defs/timestamp_ms'),
            },
          },
        },
      },
    },
    ProfileUpdate: {
      type: 'object',
      properties: {
        set: { type: 'object', description: 'Profile keys to set (^[A-Za-z0-9_.-]{1,64}$) and their values.' },
        unset: { type: 'array', items: { type: 'string' }, description: 'Profile keys to remove.' },
      },
    },
    Profile: {
      type: 'object',
      required: ['user_id', 'profile'],
      properties: { user_id: { type: 'string' }, profile: { type: 'object' } },
    },
    CoreStatus: {
      type: 'object',
      description: "A snapshot of every service of the Core (the MQTT topic's core-status is only its liveness).",
      required: ['version', 'uptime_sec', 'broker', 'plugins', 'dispatcher'],
      properties: {
        version: { type: 'string' },
        uptime_sec: { type: 'integer', minimum: 0 },
        broker: { type: 'object' },
        plugins: {
          type: 'object',
          description: 'Plugin counts: total and per state.',
          additionalProperties: { type: 'integer', minimum: 0 },
        },
        dispatcher: { type: 'object' },
        mqtt: { type: 'object' },
        retrieval: {
          type: 'object',
          description:
            'state (ok | degraded | disabled) and reason, embedder, indexed, backlog (plugins waiting to be embedded), embedding (worker threads: workers, ready_workers, restarts, queued work, last_failure), query_cache (size, capacity, hits, misses).',
        },
        event_loop: {
          type: 'object',
          description: "Delay ready work waited on the Core's event loop over the latest window.",
          properties: {
            p50_ms: { type: 'number', minimum: 0 },
            p99_ms: { type: 'number', minimum: 0 },
            max_ms: { type: 'number', minimum: 0 },
            window_sec: { type: 'number', minimum: 0 },
          },
        },
        llm: { type: 'object' },
        builtins: { type: 'array', items: { type: 'object' } },
        python: { type: 'object', description: 'Python plugin hosts: per file under embedded_plugins/, its plugin ids, host pids and load errors.' },
        access: { type: 'object', description: 'Who can speak as whom: mode (anonymous-loopback, anonymous-lan, credentials, external-broker) and a plain note.' },
      },
    },
    Liveness: {
      type: 'object',
      required: ['status'],
      properties: { status: { const: 'ok' } },
    },
    Readiness: {
      type: 'object',
      description: 'Up or down per part (broker, registry, retrieval; llm and homeassistant when configured). Why a part is down is in the Core log.',
      required: ['status', 'checks'],
      properties: {
        status: { enum: ['ready', 'not ready'] },
        checks: { type: 'object', additionalProperties: { enum: ['up', 'down'] } },
      },
    },
    JsonRpcMessage: {
      description: 'An MCP JSON-RPC 2.0 message (or a batch of them); see the MCP streamable HTTP transport.',
      oneOf: [
        { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { const: '2.0' } } },
        { type: 'array', items: { type: 'object', required: ['jsonrpc'], properties: { jsonrpc: { const: '2.0' } } } },
      ],
    },
    JsonRpcError: {
      type: 'object',
      required: ['jsonrpc', 'error'],
      properties: {
        jsonrpc: { const: '2.0' },
        id: { type: ['string', 'integer', 'null'] },
        error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' } } },
      },
    },
  };
}

// ---- paths --------------------------------------------------------------------------------------

const json = (schema: JsonObject): JsonObject => ({ 'application/json': { schema } });
const ok = (description: string, schema: JsonObject): JsonObject => ({ description, content: json(schema) });
const error = (name: string): JsonObject => ({ $ref: `#/components/responses/${name}` });
const body = (schema: JsonObject, description?: string): JsonObject => ({
  required: true,
  ...(description ? { description } : {}),
  content: json(schema),
});
const pathParameter = (name: string, description: string, schema: JsonObject = { type: 'string' }): JsonObject => ({
  name,
  in: 'path',
  required: true,
  description,
  schema,
});

function operation(operationId: string, summary: string, tags: string[], rest: JsonObject): JsonObject {
  return { operationId, summary, tags, ...rest };
}

function paths(): JsonObject {
  const pluginId = pathParameter('id', 'The plugin id.', protocolRef('common', '/$defs/plugin_id'));
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
          '200': { description: 'Every metric with its HELP and TYPE lines.', content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } } },
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
        parameters: [pluginId],
        responses: { '200': ok('The canonical descriptor with its state; secrets redacted.', ref('PluginView')), '401': error('Unauthorized'), '404': error('NotFound') },
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
        requestBody: body(ref('UnregisterPluginRequest')),
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
        parameters: [pluginId],
        responses: { '200': ok('The live check (ok may be false).', ref('PluginHealth')), '401': error('Unauthorized'), '404': error('NotFound') },
      }),
    },
    '/api/plugins/search': {
      get: operation('searchPlugins', 'The plugins that fit a request (hybrid retrieval)', ['plugins'], {
        parameters: [
          { name: 'q', in: 'query', required: true, description: 'What the plugin should do.', schema: { type: 'string' } },
          { name: 'k', in: 'query', required: false, description: 'How many plugins (1-50; larger is clamped).', schema: { type: 'integer', minimum: 1 } },
          { name: 'include_unroutable', in: 'query', required: false, description: 'Include stale and offline plugins.', schema: { enum: ['true', '1', 'false', '0'] } },
        ],
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
        parameters: [
          pluginId,
          pathParameter('tool', 'The capability id.', protocolRef('common', '/$defs/capability_id')),
          { name: 'confirmed', in: 'query', required: false, description: 'Confirms a capability that requires confirmation (also "confirmed": true in the body).', schema: { enum: ['true', '1', 'false', '0'] } },
        ],
        requestBody: { required: false, content: json(ref('ToolParameters')) },
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
        requestBody: body(ref('MessageRequest')),
        responses: {
          '200': ok('The reply, the same payload as on the channel out topic.', protocolRef('channel-message-out')),
          '400': ok('The body is invalid.', ref('ErrorBody')),
          '401': error('Unauthorized'),
        },
      }),
    },
    '/api/credentials': {
      get: operation('listCredentials', 'MQTT credentials (without secrets)', ['admin'], {
        responses: { '200': ok('Every credential.', ref('CredentialList')), '401': error('Unauthorized') },
      }),
      post: operation('addCredential', 'Create an MQTT credential; the password is shown once', ['admin'], {
        requestBody: body(ref('CredentialRequest')),
        responses: { '201': ok('The new credential.', ref('NewCredential')), ...standardErrors },
      }),
    },
    '/api/profiles/{user}': {
      get: operation('getProfile', "A user's profile", ['conversation'], {
        parameters: [pathParameter('user', 'The user id.', { type: 'string', pattern: '^[A-Za-z0-9_.@-]{1,128}$' })],
        responses: { '200': ok('The profile.', ref('Profile')), ...standardErrors },
      }),
      post: operation('updateProfile', "Set or remove keys of a user's profile", ['conversation'], {
        parameters: [pathParameter('user', 'The user id.', { type: 'string', pattern: '^[A-Za-z0-9_.@-]{1,128}$' })],
        requestBody: body(ref('ProfileUpdate')),
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

function errorResponses(): JsonObject {
  const entries: [string, string][] = [
    ['BadRequest', 'The request is invalid; every problem is listed with its path.'],
    ['Unauthorized', 'Missing or invalid bearer token.'],
    ['Forbidden', 'The operation is not allowed (e.g. unregistering a built-in plugin).'],
    ['NotFound', 'No such resource.'],
    ['Conflict', 'The id is owned by another plugin (e.g. a built-in).'],
  ];
  return Object.fromEntries(entries.map(([name, description]) => [name, { description, content: json(ref('ErrorBody')) }]));
}

/** Adds the methods of `extra` to the path items of `base` (a path may get new methods from both). */
function mergePaths(base: JsonObject, extra: Record<string, JsonObject>): JsonObject {
  const merged: JsonObject = { ...base };
  for (const [path, item] of Object.entries(extra)) merged[path] = { ...((merged[path] as JsonObject | undefined) ?? {}), ...item };
  return merged;
}

/** The OpenAPI 3.1 document of every route of the Core's HTTP API. */
export function buildOpenApiDocument(options: OpenApiOptions = {}): JsonObject {
  const protocol = allProtocolSchemas();
  const components: JsonObject = {};
  for (const [name, schema] of Object.entries(protocol) as [SchemaName, JsonObject][]) components[name] = protocolComponent(name, schema);
  const http = { ...httpSchemas(components['descriptor'] as JsonObject, components['register'] as JsonObject), ...accessSchemas(), ...dashboardSchemas(), ...frontDoorSchemas() };
  for (const name of Object.keys(http)) {
    if (name in components) throw new Error(`OpenAPI component ${name} is defined twice`);
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'HomeClaw Bus Core HTTP API',
      version: options.version ?? '0.1.0',
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
    paths: mergePaths(mergePaths(mergePaths(paths(), accessPaths()), dashboardPaths()), frontDoorPaths()),
    components: {
      schemas: { ...components, ...http },
      responses: errorResponses(),
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The admin token of the Core, or a user token (homeclaw users add <id>), which may call only POST /api/messages, GET/PUT/POST /api/profiles/<own id>, GET /api/plugins/search, GET /api/whoami, POST /v1/chat/completions, GET /v1/models and /mcp, acting as its user; other routes answer 403. On /mcp an OAuth access token works too (see /.well-known/oauth-protected-resource/mcp).',
        },
      },
    },
  };
}

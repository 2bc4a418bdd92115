// The schemas of the OpenAPI document: the protocol's JSON Schemas of topics/schemas (the MQTT contract)
// under components.schemas, so the HTTP API and the topics share one source, and the HTTP-specific
// envelopes around them.
import { allProtocolSchemas, SCHEMA_FILES, type SchemaName } from '../protocol/schemas.js';
import type { JsonObject, JsonValue } from '../protocol/types.js';
import { accessSchemas } from './openapi-access.js';
import { dashboardSchemas } from './openapi-dashboard.js';
import { frontDoorSchemas } from './openapi-front-doors.js';
import { RegistrationEnvelope } from './routes/plugins-schema.js';

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
        'mqtt: a device registered once by an administrator that then only heartbeats; it waits offline until the first ' +
        'heartbeat of a client allowed the id, which then owns it.',
      properties: {
        ...registerProperties,
        // The route checks these two with this schema; the descriptor's own fields with the protocol's.
        ...(RegistrationEnvelope.properties as unknown as JsonObject),
        version: { type: 'string', description: 'Semantic version; "1.0" and "v2" are read as 1.0.0 and 2.0.0 (with a warning).' },
        base_url: { type: 'string', format: 'uri', description: 'Shorthand for config.base_url.' },
        description_long: { type: 'string' },
        examples: { type: 'array', items: { type: 'string' } },
        keywords: { type: 'array', items: { type: 'string' } },
        health_check_url: { type: 'string', format: 'uri' },
        config: protocolRef('descriptor', '/$defs/plugin_config'),
      },
      if: { properties: { type: { const: 'subprocess' } }, required: ['type'] },
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, not a thenable.
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
            v8_helper_threads: {
              type: 'integer',
              minimum: 1,
              description:
                "V8's helper threads beside the event loop (garbage collection, compilation), from Node's --v8-pool-size at start (4 when not given).",
            },
          },
        },
        llm: { type: 'object' },
        builtins: { type: 'array', items: { type: 'object' } },
        python: { type: 'object', description: 'Python plugin hosts: per file under embedded_plugins/, its plugin ids, host pids and load errors.' },
        access: {
          type: 'object',
          description: 'Who can speak as whom: mode (anonymous-loopback, anonymous-lan, credentials, external-broker) and a plain note.',
        },
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

/** Every schema of the document: the protocol's and the HTTP envelopes, each name defined once. */
export function openApiSchemas(): Record<string, JsonObject> {
  const components: Record<string, JsonObject> = {};
  for (const [name, schema] of Object.entries(allProtocolSchemas()) as [SchemaName, JsonObject][]) components[name] = protocolComponent(name, schema);
  const http = {
    ...httpSchemas(components['descriptor'] as JsonObject, components['register'] as JsonObject),
    ...accessSchemas(),
    ...dashboardSchemas(),
    ...frontDoorSchemas(),
  };
  for (const name of Object.keys(http)) {
    if (name in components) throw new Error(`OpenAPI component ${name} is defined twice`);
  }
  return { ...components, ...http };
}

// JSON Schema of the config file. Every key is optional in the file (defaults fill the rest), but
// unknown keys are errors: a typo must not silently fall back to a default.
const str = { type: 'string' } as const;
const nullableStr = { type: ['string', 'null'] } as const;
const port = { type: 'integer', minimum: 0, maximum: 65535 } as const;
const posNum = { type: 'number', exclusiveMinimum: 0 } as const;
const posInt = { type: 'integer', minimum: 1 } as const;

function obj(properties: Record<string, unknown>): Record<string, unknown> {
  return { type: 'object', additionalProperties: false, properties };
}

// Mirrors src/access: plugin or plugin.capability patterns with *, and user ids.
const policyPattern = { type: 'string', pattern: '^[a-z0-9_*-]{1,64}(?:\\.[A-Za-z0-9_*-]{1,64})?$' } as const;
const userId = { type: 'string', pattern: '^[A-Za-z0-9_.@-]{1,128}$' } as const;
const policyRule = obj({ allow: { type: 'array', items: policyPattern }, deny: { type: 'array', items: policyPattern } });

export const CONFIG_SCHEMA = obj({
  data_dir: str,
  app_id: { type: 'string', minLength: 1, maxLength: 128 },
  log_level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
  log_format: { enum: ['auto', 'pretty', 'json'] },
  broker: obj({
    url: { type: ['string', 'null'], pattern: '^(mqtts?|wss?|tcp)://' },
    username: nullableStr,
    password: nullableStr,
    protocol_version: { enum: [5, '3.1.1'] },
    host: str,
    port,
    ws_port: port,
    allow_anonymous: { anyOf: [{ type: 'boolean' }, { const: 'auto' }] },
    max_payload_bytes: { type: 'integer', minimum: 1024, maximum: 268435455 },
    login: obj({
      max_failures: posInt,
      backoff_sec: posNum,
      max_backoff_sec: posNum,
      max_concurrent_checks: { type: 'integer', minimum: 1, maximum: 64 },
      cache_ttl_sec: { type: 'number', minimum: 0, maximum: 86400 },
    }),
  }),
  http: obj({
    host: str,
    port,
    admin_token: { type: ['string', 'null'], minLength: 16 },
    // An origin only: OAuth metadata is served at the root, so a path prefix could not be honoured.
    public_url: { type: ['string', 'null'], pattern: '^https?://[^/?#\\s]+/?$' },
  }),
  dashboard: obj({ enabled: { type: 'boolean' }, ingress_proxy: { type: ['string', 'null'], pattern: '^(?:\\d{1,3}(?:\\.\\d{1,3}){3}|[0-9A-Fa-f:]{2,39})$' } }),
  dispatch: obj({
    default_timeout_sec: posNum,
    default_max_concurrency: posInt,
    default_queue_limit: { type: 'integer', minimum: 0 },
  }),
  liveness: obj({
    default_heartbeat_interval_sec: posNum,
    grace_sec: { type: 'number', minimum: 0 },
    health_poll_sec: posNum,
    health_failure_threshold: posInt,
  }),
  plugins: obj({ dir: str, hot_reload: { type: 'boolean' }, extra_dirs: { type: 'array', items: str } }),
  retrieval: obj({
    enabled: { type: 'boolean' },
    top_k: { type: 'integer', minimum: 1, maximum: 100 },
    chroma: obj({ url: nullableStr, port, collection: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{1,62}$' } }),
    embedder: obj({
      kind: { enum: ['use-lite', 'openai'] },
      base_url: nullableStr,
      model: nullableStr,
      api_key: nullableStr,
      workers: { type: 'integer', minimum: 0, maximum: 64 },
      index_batch: { type: 'integer', minimum: 1, maximum: 256 },
      worker_nice: { type: 'integer', minimum: 0, maximum: 19 },
    }),
    query_cache_size: { type: 'integer', minimum: 0, maximum: 1000000 },
    weights: obj({ bm25: { type: 'number', minimum: 0 }, dense: { type: 'number', minimum: 0 } }),
    pinned: { type: 'array', items: str },
    force_include: {
      type: 'array',
      items: { type: 'object', additionalProperties: false, required: ['pattern', 'plugin_id'], properties: { pattern: str, plugin_id: str } },
    },
    retry_interval_sec: posNum,
    dense_candidates: { type: 'integer', minimum: 10, maximum: 10000 },
    embedder_dimension: posInt,
  }),
  llm: obj({
    base_url: nullableStr,
    model: nullableStr,
    api_key: nullableStr,
    max_rounds: { type: 'integer', minimum: 1, maximum: 50 },
    timeout_sec: posNum,
    temperature: { type: 'number', minimum: 0, maximum: 2 },
  }),
  conversation: obj({
    pending_ttl_sec: posNum,
    no_llm_threshold: { type: 'number', minimum: 0 },
    max_text_bytes: { type: 'integer', minimum: 16 },
    profiles_file: nullableStr,
  }),
  wyoming: obj({
    port: { type: ['integer', 'null'], minimum: 0, maximum: 65535 },
    host: str,
    user_id: { type: 'string', minLength: 1, maxLength: 256 },
    users: { type: 'object', propertyNames: { minLength: 1, maxLength: 256 }, additionalProperties: { type: 'string', minLength: 1, maxLength: 256 } },
    languages: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 32 } },
    name: { type: 'string', minLength: 1, maxLength: 128 },
    supports_home_control: { type: 'boolean' },
    allow_from: { type: 'array', items: { type: 'string', minLength: 1 } },
    max_line_bytes: { type: 'integer', minimum: 1024, maximum: 16_777_216 },
    max_data_bytes: { type: 'integer', minimum: 1024, maximum: 268_435_456 },
    max_payload_bytes: { type: 'integer', minimum: 0, maximum: 268_435_456 },
    max_connections: posInt,
    idle_timeout_sec: posNum,
  }),
  zigbee2mqtt: obj({
    enabled: { type: 'boolean' },
    // One or more topic levels without wildcards, not starting with '$' or '/', never inside homeclaw/.
    base_topic: { type: 'string', pattern: '^(?!homeclaw(/|$))[^/#+$]([^#+]*[^/#+])?$' },
    confirm_timeout_sec: { type: 'number', exclusiveMinimum: 0, maximum: 300 },
  }),
  notifications: obj({ default_channel: { type: ['string', 'null'], pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' } }),
  scheduler: obj({
    enabled: { type: 'boolean' },
    timezone: nullableStr,
    user_id: { type: ['string', 'null'], minLength: 1, maxLength: 256 },
    channel: { type: ['string', 'null'], pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' },
  }),
  homeassistant: obj({
    url: { type: ['string', 'null'], pattern: '^https?://' },
    token: { type: ['string', 'null'], minLength: 1 },
    refresh_sec: { type: 'number', minimum: 5 },
    timeout_sec: posNum,
    discovery: { type: 'boolean' },
    // One topic level: Home Assistant's discovery topic is <prefix>/<component>/.../config.
    discovery_prefix: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
  }),
  access: obj({
    channels: {
      type: 'object',
      propertyNames: { pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' },
      additionalProperties: obj({ users: { type: 'array', items: { type: 'string', pattern: '^(?:\\*|[A-Za-z0-9_.@-]{1,128})$' } } }),
    },
    callers: obj({ users: { type: ['array', 'null'], minItems: 1, items: { type: 'string', pattern: '^(?:\\*|[A-Za-z0-9_.@-]{1,128})$' } } }),
    audit: obj({
      max_entries: { type: 'integer', minimum: 10 },
      max_age_days: posNum,
      flush_interval_ms: { type: 'integer', minimum: 10, maximum: 60000 },
    }),
  }),
  policy: obj({
    default: policyRule,
    users: { type: 'object', propertyNames: userId, additionalProperties: policyRule },
    require_confirmation: { type: 'array', items: policyPattern },
  }),
  limits: obj({ max_capabilities: posInt, max_examples: { type: 'integer', minimum: 0 } }),
  events: obj({ invocations: { anyOf: [{ type: 'boolean' }, { const: 'auto' }] } }),
  metrics: obj({
    enabled: { type: 'boolean' },
    token: { type: ['string', 'null'], minLength: 16 },
    max_series: { type: 'integer', minimum: 1 },
  }),
  openai_endpoint: obj({
    enabled: { type: 'boolean' },
    default_user: userId,
    user_field: { enum: ['user', 'conversation'] },
    max_body_bytes: { type: 'integer', minimum: 1024, maximum: 67_108_864 },
    session_ttl_sec: posNum,
  }),
  oauth: obj({
    enabled: { type: 'boolean' },
    dynamic_registration: { type: 'boolean' },
    access_token_ttl_sec: { type: 'integer', minimum: 1 },
    refresh_token_ttl_sec: { type: 'integer', minimum: 60 },
    code_ttl_sec: { type: 'integer', minimum: 10, maximum: 600 },
    max_dynamic_clients: posInt,
  }),
});

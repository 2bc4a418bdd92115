// The config file's schema: the one source of its keys, their types (src/config/types.ts derives them with
// Static<>) and their defaults (`default:` keywords, filled in by the loader). Every key is optional in the
// file, but unknown keys are errors: a typo must not silently fall back to a default.
import { type TSchema, Type } from '@sinclair/typebox';

/** A closed section: its missing keys take their defaults, and a missing section is built from them. */
function section<P extends Record<string, TSchema>>(properties: P) {
  return Type.Object(properties, { additionalProperties: false, default: {} });
}

/** A closed object inside a list or map: no defaults of its own. */
function closed<P extends Record<string, TSchema>>(properties: P) {
  return Type.Object(properties, { additionalProperties: false });
}

/** One of fixed values, kept as `enum` (one clear error message) rather than a union of literals. */
function oneOf<const V extends readonly (string | number)[]>(values: V, defaultValue: V[number]) {
  return Type.Unsafe<V[number]>({ enum: [...values], default: defaultValue });
}

/** A string or null, kept as `type: [string, null]` so the error says which types are allowed. */
function nullableString(options: Record<string, unknown> = {}) {
  return Type.Unsafe<string | null>({ type: ['string', 'null'], default: null, ...options });
}

/** true, false or the string 'auto'. */
function boolOrAuto() {
  return Type.Unsafe<boolean | 'auto'>({ anyOf: [{ type: 'boolean' }, { const: 'auto' }], default: 'auto' });
}

const str = (value: string) => Type.String({ default: value });
const bool = (value: boolean) => Type.Boolean({ default: value });
const port = (value: number) => Type.Integer({ minimum: 0, maximum: 65535, default: value });
const posNum = (value: number) => Type.Number({ exclusiveMinimum: 0, default: value });
const posInt = (value: number) => Type.Integer({ minimum: 1, default: value });
function strings<T extends TSchema = ReturnType<typeof Type.String>>(items?: T) {
  return Type.Array(items ?? (Type.String() as TSchema as T), { default: [] });
}

// Mirrors src/access: plugin or plugin.capability patterns with *, and user ids.
const policyPattern = Type.String({ pattern: '^[a-z0-9_*-]{1,64}(?:\\.[A-Za-z0-9_*-]{1,64})?$' });
const userIdPattern = '^[A-Za-z0-9_.@-]{1,128}$';
const userOrAnyone = Type.String({ pattern: '^(?:\\*|[A-Za-z0-9_.@-]{1,128})$' });
const channelName = '^[a-z0-9][a-z0-9_-]{0,63}$';

/** What one user (or every user without an entry) may reach: plugin or plugin.capability patterns. */
export const PolicyRuleSchema = closed({ allow: Type.Optional(Type.Array(policyPattern)), deny: Type.Optional(Type.Array(policyPattern)) });

/** A map with validated key names and no defaults inside. */
function map<V extends TSchema>(propertyNames: Record<string, unknown>, value: V) {
  return Type.Unsafe<Record<string, V['static']>>({ type: 'object', propertyNames, additionalProperties: value, default: {} });
}

export const BrokerLoginSchema = section({
  /** Failed logins from one address before it backs off. */
  max_failures: posInt(5),
  /** First backoff; each further failure doubles it up to max_backoff_sec. */
  backoff_sec: posNum(1),
  max_backoff_sec: posNum(60),
  /** Password checks (scrypt) running at once. */
  max_concurrent_checks: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
  /** How long a verified credential is recognised without a new hash; 0 disables. */
  cache_ttl_sec: Type.Number({ minimum: 0, maximum: 86400, default: 300 }),
  /** Connections one login may hold at once; more are refused with CONNACK 3 until one closes. */
  max_connections: Type.Integer({ minimum: 1, maximum: 100_000, default: 256 }),
});

export const BrokerSchema = section({
  /** When set, the Core is a client of this external broker (mqtt://host:port) instead of embedding Aedes. */
  url: nullableString({ pattern: '^(mqtts?|wss?|tcp)://' }),
  username: nullableString(),
  password: nullableString(),
  /**
   * External broker: the MQTT version the Core speaks, 5 (message expiry, user properties, reason codes)
   * or '3.1.1'. With 5, a broker that refuses it is connected to with 3.1.1 instead.
   */
  protocol_version: oneOf([5, '3.1.1'], 5),
  host: str('127.0.0.1'),
  port: port(1883),
  /** WebSocket listener port; 0 disables it. */
  ws_port: port(9001),
  /**
   * Web page origins (scheme://host[:port]) whose scripts may open MQTT over WebSocket. A browser names the
   * page's origin in every upgrade; any other page is refused, so no web site the user visits can reach the
   * broker through the user's browser. MQTT libraries send no origin and are not affected.
   */
  ws_allowed_origins: strings(Type.String({ pattern: '^https?://[^/\\s]+$' })),
  /** true | false | 'auto' (anonymous allowed only while every listener is on loopback). */
  allow_anonymous: boolOrAuto(),
  max_payload_bytes: Type.Integer({ minimum: 1024, maximum: 268435455, default: 262_144 }),
  /** Embedded broker: how password checks of MQTT logins are limited. */
  login: BrokerLoginSchema,
});

export const HttpSchema = section({
  host: str('127.0.0.1'),
  port: port(8765),
  /** Bearer token for the HTTP API; when null the Core generates one into <data_dir>/admin.token. */
  admin_token: nullableString({ minLength: 16 }),
  /**
   * The origin clients reach the Core at (https://homeclaw.example.com) when a reverse proxy sits in front;
   * OAuth metadata names its URLs from it. null: from each request's Host header. An origin only: OAuth
   * metadata is served at the root, so a path prefix could not be honoured.
   */
  public_url: nullableString({ pattern: '^https?://[^/?#\\s]+/?$' }),
  /**
   * Open connections one client address may hold; more are closed at once. Behind a reverse proxy every
   * client shares the proxy's address: raise it if the proxy keeps a large pool.
   */
  max_connections_per_address: Type.Integer({ minimum: 1, maximum: 100_000, default: 128 }),
  /** Open connections from all clients together; more are closed at once, keeping descriptors for the broker and the database. */
  max_connections: Type.Integer({ minimum: 1, maximum: 100_000, default: 1024 }),
});

export const DashboardSchema = section({
  /** Serve the web dashboard at / (its files hold no data; the API behind it still needs a token). */
  enabled: bool(true),
  /**
   * Address of a trusted ingress proxy (Home Assistant's Supervisor: 172.30.32.2): requests from that
   * TCP peer carrying X-Ingress-Path and no Authorization header act as the admin. null: no ingress.
   */
  ingress_proxy: nullableString({ pattern: '^(?:\\d{1,3}(?:\\.\\d{1,3}){3}|[0-9A-Fa-f:]{2,39})$' }),
});

export const DispatchSchema = section({
  default_timeout_sec: posNum(30),
  default_max_concurrency: posInt(4),
  default_queue_limit: Type.Integer({ minimum: 0, default: 100 }),
});

export const LivenessSchema = section({
  default_heartbeat_interval_sec: posNum(15),
  /** Extra seconds after a missed heartbeat before a plugin becomes stale. */
  grace_sec: Type.Number({ minimum: 0, default: 10 }),
  /** How often http plugins' health_check_url is polled. */
  health_poll_sec: posNum(15),
  health_failure_threshold: posInt(3),
});

export const PluginsSchema = section({
  /** Folder of built-in plugins (the loader resolves the default to the package's own folder). */
  dir: str('./plugins'),
  hot_reload: bool(true),
  /** Extra folders scanned for plugin manifests of any type. */
  extra_dirs: strings(),
});

export const RetrievalSchema = section({
  enabled: bool(true),
  top_k: Type.Integer({ minimum: 1, maximum: 100, default: 5 }),
  chroma: section({
    url: nullableString(),
    port: port(0),
    collection: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{1,62}$', default: 'homeclaw_plugins' }),
  }),
  embedder: section({
    kind: oneOf(['use-lite', 'openai'], 'use-lite'),
    base_url: nullableString(),
    model: nullableString(),
    api_key: nullableString(),
    /** Worker threads running the offline model; 0 = max(1, cores - 1). */
    workers: Type.Optional(Type.Integer({ minimum: 0, maximum: 64, default: 0 })),
    /** Texts per indexing batch handed to a worker: a query waits at most for one such batch. */
    index_batch: Type.Optional(Type.Integer({ minimum: 1, maximum: 256, default: 8 })),
    /** Nice value of the embedding worker threads (Linux); above 0 the event loop wins the CPU. */
    worker_nice: Type.Optional(Type.Integer({ minimum: 0, maximum: 19, default: 0 })),
    /** Largest share of a worker's time spent indexing (0.05-1; 0 = 0.5 on machines with 2 cores or fewer, else 1). */
    index_duty_cycle: Type.Optional(Type.Union([Type.Literal(0), Type.Number({ minimum: 0.05, maximum: 1 })], { default: 0 })),
  }),
  /** Query embeddings remembered (LRU) so a repeated question costs no model time; 0 disables. */
  query_cache_size: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000000, default: 1000 })),
  weights: section({ bm25: Type.Number({ minimum: 0, default: 0.3 }), dense: Type.Number({ minimum: 0, default: 0.7 }) }),
  /** Plugin ids always offered to the LLM. */
  pinned: strings(),
  /** Regex on the user message → plugin id, as in HomeClaw. */
  force_include: Type.Array(closed({ pattern: Type.String(), plugin_id: Type.String() }), { default: [] }),
  /** How often a degraded index retries Chroma and the embedder (and a healthy one checks Chroma). */
  retry_interval_sec: Type.Optional(posNum(10)),
  /** Minimum number of Chroma documents fetched per query before fusion. */
  dense_candidates: Type.Optional(Type.Integer({ minimum: 10, maximum: 10000, default: 400 })),
  /** Dimension of an OpenAI-compatible embedding model, when known in advance. */
  embedder_dimension: Type.Optional(Type.Integer({ minimum: 1 })),
});

export const LlmSchema = section({
  base_url: nullableString(),
  model: nullableString(),
  api_key: nullableString(),
  max_rounds: Type.Integer({ minimum: 1, maximum: 50, default: 5 }),
  timeout_sec: posNum(60),
  temperature: Type.Number({ minimum: 0, maximum: 2, default: 0.2 }),
});

export const ConversationSchema = section({
  pending_ttl_sec: posNum(600),
  /** Minimum retrieval score for the no-LLM path to route a natural message directly. */
  no_llm_threshold: Type.Number({ minimum: 0, default: 1.0 }),
  max_text_bytes: Type.Integer({ minimum: 16, default: 16_384 }),
  profiles_file: nullableString(),
  /**
   * Messages one user may send per minute over every channel together (bursts up to this many); more are
   * answered with error_code rate_limited. Each message can cost a model call and a plugin call.
   */
  max_messages_per_minute: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 60 }),
});

export const WyomingSchema = section({
  /** TCP port of the Wyoming conversation agent; null: off; 0: a free port chosen at start. */
  port: Type.Unsafe<number | null>({ type: ['integer', 'null'], minimum: 0, maximum: 65535, default: null }),
  host: str('127.0.0.1'),
  /** The user a Wyoming conversation speaks for when its satellite or device is not in `users`. */
  user_id: Type.String({ minLength: 1, maxLength: 256, default: 'household' }),
  /** Home Assistant satellite entity id or device id → user id. */
  users: map({ minLength: 1, maxLength: 256 }, Type.String({ minLength: 1, maxLength: 256 })),
  /** Languages announced to Home Assistant; empty: every language. */
  languages: Type.Array(Type.String({ minLength: 1, maxLength: 32 }), { default: ['en'] }),
  /** The agent's name in Home Assistant. */
  name: Type.String({ minLength: 1, maxLength: 128, default: 'HomeClaw' }),
  /** Announced as supports_home_control: Home Assistant then treats HomeClaw as able to control the home. */
  supports_home_control: bool(false),
  /** Client addresses allowed to connect; empty: any. */
  allow_from: strings(Type.String({ minLength: 1 })),
  max_line_bytes: Type.Integer({ minimum: 1024, maximum: 16_777_216, default: 65_536 }),
  max_data_bytes: Type.Integer({ minimum: 1024, maximum: 268_435_456, default: 1_048_576 }),
  max_payload_bytes: Type.Integer({ minimum: 0, maximum: 268_435_456, default: 1_048_576 }),
  max_connections: posInt(64),
  idle_timeout_sec: posNum(300),
});

export const Zigbee2mqttSchema = section({
  /** Turn every device of a Zigbee2MQTT installation on the Core's broker into a plugin. */
  enabled: bool(false),
  /**
   * Zigbee2MQTT's mqtt.base_topic: one or more topic levels without wildcards, not starting with '$' or
   * '/', never inside homeclaw/.
   */
  base_topic: Type.String({ pattern: '^(?!homeclaw(/|$))[^/#+$]([^#+]*[^/#+])?$', default: 'zigbee2mqtt' }),
  /** How long a set waits for the device's state to echo the new values. */
  confirm_timeout_sec: Type.Number({ exclusiveMinimum: 0, maximum: 300, default: 5 }),
});

export const NotificationsSchema = section({
  /** Where a message for a user goes when they have no last channel anyone listens to; null: none. */
  default_channel: nullableString({ pattern: channelName }),
  /** Messages one plugin may send one user per minute (bursts up to this many); more are refused as rate_limited. */
  max_per_minute: Type.Integer({ minimum: 1, maximum: 100_000, default: 20 }),
});

export const SchedulerSchema = section({
  /** Runs the `tasks` of plugins' config.yml on their schedule. */
  enabled: bool(true),
  /** IANA zone the tasks' times are read in; null: the machine's. */
  timezone: nullableString(),
  /** Who gets a task's result when the task names nobody. */
  user_id: nullableString({ minLength: 1, maxLength: 256 }),
  /** Where it goes when the task names no channel; null: that user's last channel (else the default channel). */
  channel: nullableString({ pattern: channelName }),
});

export const HomeAssistantSchema = section({
  /** Base URL of Home Assistant (http://homeassistant.local:8123); null: no Home Assistant plugin. */
  url: nullableString({ pattern: '^https?://' }),
  /** Long-lived access token; sent only to Home Assistant, never stored in the registry or logged. */
  token: nullableString({ minLength: 1 }),
  /** How often the exposed entities (and the tool list) are read again, in seconds. */
  refresh_sec: Type.Number({ minimum: 5, default: 300 }),
  /** Limit for the MCP handshake, tools/list and GetLiveContext, in seconds. */
  timeout_sec: posNum(15),
  /** Publish MQTT device discovery for the Core and its plugins (needs a broker Home Assistant uses). */
  discovery: bool(false),
  /** Home Assistant's discovery prefix, one topic level; its birth message is read on <prefix>/status. */
  discovery_prefix: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', default: 'homeassistant' }),
});

export const AccessSchema = section({
  /** Users each channel may speak for when the broker cannot say who published (external broker). */
  channels: map({ pattern: channelName }, closed({ users: Type.Array(userOrAnyone) })),
  /**
   * Users calls on the MQTT front door may act as when the caller has no login of its own: every caller on
   * an external broker (null: only "household"), anonymous callers on the embedded one (null: anyone).
   */
  callers: section({ users: Type.Unsafe<string[] | null>({ type: ['array', 'null'], minItems: 1, items: userOrAnyone, default: null }) }),
  audit: section({
    /** The oldest entries beyond this count are deleted. */
    max_entries: Type.Integer({ minimum: 10, default: 100_000 }),
    /** Entries older than this are deleted. */
    max_age_days: posNum(90),
    /** Entries are written in batches at most this far apart. */
    flush_interval_ms: Type.Integer({ minimum: 10, maximum: 60000, default: 1000 }),
  }),
});

export const PolicySchema = section({
  /** For users without an entry of their own; absent: they may reach everything. */
  default: Type.Optional(PolicyRuleSchema),
  users: map({ type: 'string', pattern: userIdPattern }, PolicyRuleSchema),
  /** Capabilities that always need the user's confirmation, beside those flagged in their descriptor. */
  require_confirmation: strings(policyPattern),
});

/** What one plugin may declare; more is refused at registration with an error naming the limit. */
export const LimitsSchema = section({ max_capabilities: posInt(256), max_examples: Type.Integer({ minimum: 0, default: 32 }) });

export const EventsSchema = section({
  /** Invocation events on homeclaw/events/invocation: true, false, or 'auto' (only when a subscriber is visible). */
  invocations: boolOrAuto(),
});

export const MetricsSchema = section({
  /** Serve GET /metrics (Prometheus text format) and keep the metrics behind it. */
  enabled: bool(true),
  /** A scraper's bearer token: it may read /metrics and nothing else (the admin token may too). */
  token: nullableString({ minLength: 16 }),
  /** Distinct (plugin, capability) pairs in the invocation metrics; pairs beyond it share plugin="_other". */
  max_series: posInt(1000),
});

export const OpenAiEndpointSchema = section({
  /** Serve POST /v1/chat/completions and GET /v1/models. */
  enabled: bool(true),
  /** Who an admin-token request speaks as when it names no user. */
  default_user: Type.String({ pattern: userIdPattern, default: 'household' }),
  /**
   * What the request's `user` field means. user: the HomeClaw user (an admin token may name anyone, a user
   * token only itself). conversation: the client's conversation id (Home Assistant's OpenAI-compatible
   * integrations send it there): it keys the session and never names who speaks.
   */
  user_field: oneOf(['user', 'conversation'], 'user'),
  /** Larger request bodies are refused with 413. */
  max_body_bytes: Type.Integer({ minimum: 1024, maximum: 67_108_864, default: 1_048_576 }),
  /** How long a conversation can be continued (a reply to the last answer finds its session). */
  session_ttl_sec: posNum(86_400),
});

export const OAuthSchema = section({
  /** OAuth 2.1 for /mcp (authorization code with PKCE), beside the admin and user bearer tokens. */
  enabled: bool(true),
  /** RFC 7591: clients may register themselves at /oauth/register (they still need a consent with a token). */
  dynamic_registration: bool(false),
  access_token_ttl_sec: Type.Integer({ minimum: 1, default: 3600 }),
  /** A refresh token is replaced at every use; unused for this long, the grant ends. */
  refresh_token_ttl_sec: Type.Integer({ minimum: 60, default: 7_776_000 }),
  /** How long the code from the consent page may wait for its exchange. */
  code_ttl_sec: Type.Integer({ minimum: 10, maximum: 600, default: 120 }),
  /** Dynamic registration stops at this many clients. */
  max_dynamic_clients: posInt(100),
});

export const CONFIG_SCHEMA = Type.Object(
  {
    /** Where the Core keeps its database, Chroma data, admin token and plugin data. */
    data_dir: str('./data'),
    /** This assistant instance's id (HomeClaw's app_id), sent to plugins in every PluginRequest. */
    app_id: Type.String({ minLength: 1, maxLength: 128, default: 'homeclaw' }),
    log_level: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    /** auto: one readable line per event when the log goes to a terminal, JSON lines otherwise. */
    log_format: oneOf(['auto', 'pretty', 'json'], 'auto'),
    broker: BrokerSchema,
    http: HttpSchema,
    dashboard: DashboardSchema,
    dispatch: DispatchSchema,
    liveness: LivenessSchema,
    plugins: PluginsSchema,
    retrieval: RetrievalSchema,
    llm: LlmSchema,
    conversation: ConversationSchema,
    wyoming: WyomingSchema,
    zigbee2mqtt: Zigbee2mqttSchema,
    notifications: NotificationsSchema,
    scheduler: SchedulerSchema,
    homeassistant: HomeAssistantSchema,
    access: AccessSchema,
    policy: PolicySchema,
    limits: LimitsSchema,
    events: EventsSchema,
    metrics: MetricsSchema,
    openai_endpoint: OpenAiEndpointSchema,
    oauth: OAuthSchema,
  },
  { additionalProperties: false },
);

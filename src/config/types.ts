// The Core's configuration after defaults, file and environment are merged and validated.

export interface BrokerConfig {
  /** When set, the Core is a client of this external broker (mqtt://host:port) instead of embedding Aedes. */
  url: string | null;
  username: string | null;
  password: string | null;
  /**
   * External broker: the MQTT version the Core speaks, 5 (message expiry, user properties, reason codes)
   * or '3.1.1'. With 5, a broker that refuses it is connected to with 3.1.1 instead.
   */
  protocol_version: 5 | '3.1.1';
  host: string;
  port: number;
  /** WebSocket listener port; 0 disables it. */
  ws_port: number;
  /** true | false | 'auto' (anonymous allowed only while every listener is on loopback). */
  allow_anonymous: boolean | 'auto';
  max_payload_bytes: number;
  /** Embedded broker: how password checks of MQTT logins are limited. */
  login: BrokerLoginConfig;
}

export interface BrokerLoginConfig {
  /** Failed logins from one address before it backs off. */
  max_failures: number;
  /** First backoff; each further failure doubles it up to max_backoff_sec. */
  backoff_sec: number;
  max_backoff_sec: number;
  /** Password checks (scrypt) running at once. */
  max_concurrent_checks: number;
  /** How long a verified credential is recognised without a new hash; 0 disables. */
  cache_ttl_sec: number;
}

export interface HttpConfig {
  host: string;
  port: number;
  /** Bearer token for the HTTP API; when null the Core generates one into <data_dir>/admin.token. */
  admin_token: string | null;
  /**
   * The origin clients reach the Core at (https://homeclaw.example.com) when a reverse proxy sits in front;
   * OAuth metadata names its URLs from it. null: from each request's Host header.
   */
  public_url: string | null;
}

export interface OpenAiEndpointConfig {
  /** Serve POST /v1/chat/completions and GET /v1/models. */
  enabled: boolean;
  /** Who an admin-token request speaks as when it names no user. */
  default_user: string;
  /**
   * What the request's `user` field means. user: the HomeClaw user (an admin token may name anyone, a user
   * token only itself). conversation: the client's conversation id (Home Assistant's OpenAI-compatible
   * integrations send it there): it keys the session and never names who speaks.
   */
  user_field: 'user' | 'conversation';
  /** Larger request bodies are refused with 413. */
  max_body_bytes: number;
  /** How long a conversation can be continued (a reply to the last answer finds its session). */
  session_ttl_sec: number;
}

export interface OAuthConfig {
  /** OAuth 2.1 for /mcp (authorization code with PKCE), beside the admin and user bearer tokens. */
  enabled: boolean;
  /** RFC 7591: clients may register themselves at /oauth/register (they still need a consent with a token). */
  dynamic_registration: boolean;
  access_token_ttl_sec: number;
  /** A refresh token is replaced at every use; unused for this long, the grant ends. */
  refresh_token_ttl_sec: number;
  /** How long the code from the consent page may wait for its exchange. */
  code_ttl_sec: number;
  /** Dynamic registration stops at this many clients. */
  max_dynamic_clients: number;
}

export interface DashboardConfig {
  /** Serve the web dashboard at / (its files hold no data; the API behind it still needs a token). */
  enabled: boolean;
  /**
   * Address of a trusted ingress proxy (Home Assistant's Supervisor: 172.30.32.2): requests from that
   * TCP peer carrying X-Ingress-Path and no Authorization header act as the admin. null: no ingress.
   */
  ingress_proxy: string | null;
}

export interface DispatchConfig {
  default_timeout_sec: number;
  default_max_concurrency: number;
  default_queue_limit: number;
}

export interface LivenessConfig {
  default_heartbeat_interval_sec: number;
  /** Extra seconds after a missed heartbeat before a plugin becomes stale. */
  grace_sec: number;
  /** How often http plugins' health_check_url is polled. */
  health_poll_sec: number;
  health_failure_threshold: number;
}

export interface PluginsConfig {
  /** Folder of built-in plugins. */
  dir: string;
  hot_reload: boolean;
  /** Extra folders scanned for plugin manifests of any type. */
  extra_dirs: string[];
}

export interface RetrievalConfig {
  enabled: boolean;
  top_k: number;
  chroma: { url: string | null; port: number; collection: string };
  embedder: {
    kind: 'use-lite' | 'openai';
    base_url: string | null;
    model: string | null;
    api_key: string | null;
    /** Worker threads running the offline model; 0 = max(1, cores - 1). */
    workers?: number;
    /** Texts per indexing batch handed to a worker: a query waits at most for one such batch. */
    index_batch?: number;
    /** Nice value of the embedding worker threads (Linux); above 0 the event loop wins the CPU. */
    worker_nice?: number;
  };
  /** Query embeddings remembered (LRU) so a repeated question costs no model time; 0 disables. */
  query_cache_size?: number;
  weights: { bm25: number; dense: number };
  /** Plugin ids always offered to the LLM. */
  pinned: string[];
  /** Regex on the user message → plugin id, as in HomeClaw. */
  force_include: { pattern: string; plugin_id: string }[];
  /** How often a degraded index retries Chroma and the embedder (and a healthy one checks Chroma). */
  retry_interval_sec?: number;
  /** Minimum number of Chroma documents fetched per query before fusion. */
  dense_candidates?: number;
  /** Dimension of an OpenAI-compatible embedding model, when known in advance. */
  embedder_dimension?: number;
}

export interface LlmConfig {
  base_url: string | null;
  model: string | null;
  api_key: string | null;
  max_rounds: number;
  timeout_sec: number;
  temperature: number;
}

export interface ConversationConfig {
  pending_ttl_sec: number;
  /** Minimum retrieval score for the no-LLM path to route a natural message directly. */
  no_llm_threshold: number;
  max_text_bytes: number;
  profiles_file: string | null;
}

export interface WyomingConfig {
  /** TCP port of the Wyoming conversation agent; null: off; 0: a free port chosen at start. */
  port: number | null;
  host: string;
  /** The user a Wyoming conversation speaks for when its satellite or device is not in `users`. */
  user_id: string;
  /** Home Assistant satellite entity id or device id → user id. */
  users: Record<string, string>;
  /** Languages announced to Home Assistant; empty: every language. */
  languages: string[];
  /** The agent's name in Home Assistant. */
  name: string;
  /** Announced as supports_home_control: Home Assistant then treats HomeClaw as able to control the home. */
  supports_home_control: boolean;
  /** Client addresses allowed to connect; empty: any. */
  allow_from: string[];
  max_line_bytes: number;
  max_data_bytes: number;
  max_payload_bytes: number;
  max_connections: number;
  idle_timeout_sec: number;
}

export interface Zigbee2mqttConfig {
  /** Turn every device of a Zigbee2MQTT installation on the Core's broker into a plugin. */
  enabled: boolean;
  /** Zigbee2MQTT's mqtt.base_topic. */
  base_topic: string;
  /** How long a set waits for the device's state to echo the new values. */
  confirm_timeout_sec: number;
}

export interface NotificationsConfig {
  /** Where a message for a user goes when they have no last channel anyone listens to; null: none. */
  default_channel: string | null;
}

export interface SchedulerConfig {
  /** Runs the `tasks` of plugins' config.yml on their schedule. */
  enabled: boolean;
  /** IANA zone the tasks' times are read in; null: the machine's. */
  timezone: string | null;
  /** Who gets a task's result when the task names nobody. */
  user_id: string | null;
  /** Where it goes when the task names no channel; null: that user's last channel (else the default channel). */
  channel: string | null;
}

export interface HomeAssistantConfig {
  /** Base URL of Home Assistant (http://homeassistant.local:8123); null: no Home Assistant plugin. */
  url: string | null;
  /** Long-lived access token; sent only to Home Assistant, never stored in the registry or logged. */
  token: string | null;
  /** How often the exposed entities (and the tool list) are read again, in seconds. */
  refresh_sec: number;
  /** Limit for the MCP handshake, tools/list and GetLiveContext, in seconds. */
  timeout_sec: number;
  /** Publish MQTT device discovery for the Core and its plugins (needs a broker Home Assistant uses). */
  discovery: boolean;
  /** Home Assistant's discovery prefix; its birth message is read on <prefix>/status. */
  discovery_prefix: string;
}

/** What one user (or every user without an entry) may reach: plugin or plugin.capability patterns. */
export interface PolicyRule {
  allow?: string[];
  deny?: string[];
}

export interface PolicyConfig {
  /** For users without an entry of their own; absent: they may reach everything. */
  default?: PolicyRule;
  users: Record<string, PolicyRule>;
  /** Capabilities that always need the user's confirmation, beside those flagged in their descriptor. */
  require_confirmation: string[];
}

export interface AccessConfig {
  /** Users each channel may speak for when the broker cannot say who published (external broker). */
  channels: Record<string, { users: string[] }>;
  /**
   * Users calls on the MQTT front door may act as when the caller has no login of its own: every caller on
   * an external broker (null: only "household"), anonymous callers on the embedded one (null: anyone).
   */
  callers: { users: string[] | null };
  audit: {
    /** The oldest entries beyond this count are deleted. */
    max_entries: number;
    /** Entries older than this are deleted. */
    max_age_days: number;
    /** Entries are written in batches at most this far apart. */
    flush_interval_ms: number;
  };
}

/** What one plugin may declare; more is refused at registration with an error naming the limit. */
export interface LimitsConfig {
  max_capabilities: number;
  max_examples: number;
}

export interface EventsConfig {
  /** Invocation events on homeclaw/events/invocation: true, false, or 'auto' (only when a subscriber is visible). */
  invocations: boolean | 'auto';
}

export interface MetricsConfig {
  /** Serve GET /metrics (Prometheus text format) and keep the metrics behind it. */
  enabled: boolean;
  /** A scraper's bearer token: it may read /metrics and nothing else (the admin token may too). */
  token: string | null;
  /** Distinct (plugin, capability) pairs in the invocation metrics; pairs beyond it share plugin="_other". */
  max_series: number;
}

export interface CoreConfig {
  data_dir: string;
  /** This assistant instance's id (HomeClaw's app_id), sent to plugins in every PluginRequest. */
  app_id: string;
  log_level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** auto: one readable line per event when the log goes to a terminal, JSON lines otherwise. */
  log_format: 'auto' | 'pretty' | 'json';
  broker: BrokerConfig;
  http: HttpConfig;
  dashboard: DashboardConfig;
  dispatch: DispatchConfig;
  liveness: LivenessConfig;
  plugins: PluginsConfig;
  retrieval: RetrievalConfig;
  llm: LlmConfig;
  conversation: ConversationConfig;
  wyoming: WyomingConfig;
  zigbee2mqtt: Zigbee2mqttConfig;
  notifications: NotificationsConfig;
  scheduler: SchedulerConfig;
  homeassistant: HomeAssistantConfig;
  access: AccessConfig;
  policy: PolicyConfig;
  limits: LimitsConfig;
  events: EventsConfig;
  metrics: MetricsConfig;
  openai_endpoint: OpenAiEndpointConfig;
  oauth: OAuthConfig;
}

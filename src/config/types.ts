// The Core's configuration after defaults, file and environment are merged and validated.

export interface BrokerConfig {
  /** When set, the Core is a client of this external broker (mqtt://host:port) instead of embedding Aedes. */
  url: string | null;
  username: string | null;
  password: string | null;
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
  };
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

export interface CoreConfig {
  data_dir: string;
  log_level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  broker: BrokerConfig;
  http: HttpConfig;
  dispatch: DispatchConfig;
  liveness: LivenessConfig;
  plugins: PluginsConfig;
  retrieval: RetrievalConfig;
  llm: LlmConfig;
  conversation: ConversationConfig;
}

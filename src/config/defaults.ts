import type { CoreConfig } from './types.js';

/** Embedded defaults: what `npm start` runs with on a fresh machine, no file needed. */
export const DEFAULT_CONFIG: CoreConfig = {
  data_dir: './data',
  log_level: 'info',
  broker: {
    url: null,
    username: null,
    password: null,
    host: '127.0.0.1',
    port: 1883,
    ws_port: 9001,
    allow_anonymous: 'auto',
    max_payload_bytes: 262_144,
  },
  http: { host: '127.0.0.1', port: 8765, admin_token: null },
  dispatch: { default_timeout_sec: 30, default_max_concurrency: 4, default_queue_limit: 100 },
  liveness: { default_heartbeat_interval_sec: 15, grace_sec: 10, health_poll_sec: 15, health_failure_threshold: 3 },
  plugins: { dir: './plugins', hot_reload: true, extra_dirs: [] },
  retrieval: {
    enabled: true,
    top_k: 5,
    chroma: { url: null, port: 0, collection: 'homeclaw_plugins' },
    embedder: { kind: 'use-lite', base_url: null, model: null, api_key: null, workers: 0, index_batch: 8, worker_nice: 0 },
    query_cache_size: 1000,
    weights: { bm25: 0.3, dense: 0.7 },
    pinned: [],
    force_include: [],
  },
  llm: { base_url: null, model: null, api_key: null, max_rounds: 5, timeout_sec: 60, temperature: 0.2 },
  conversation: { pending_ttl_sec: 600, no_llm_threshold: 1.0, max_text_bytes: 16_384, profiles_file: null },
  limits: { max_capabilities: 256, max_examples: 32 },
  events: { invocations: 'auto' },
};

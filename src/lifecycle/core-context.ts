// What a running Core is made of and how it is started: the context handed to tests and tools (every
// long-lived part by name), the handle startCore returns, its options, and the error of a bad config.
import type Database from 'better-sqlite3';
import type { AuditLog } from '../access/audit-log.js';
import type { AccessPolicy } from '../access/policy.js';
import type { UserTokenStore } from '../access/user-tokens.js';
import type { AdapterMap } from '../adapters/adapter-map.js';
import type { HttpServer } from '../api/server.js';
import type { EmbeddedBrokerHandle } from '../bus/broker.js';
import type { CoreBus } from '../bus/core-bus.js';
import type { CredentialStore } from '../bus/credentials.js';
import type { Notifier } from '../channels/notifier.js';
import type { TaskScheduler } from '../channels/task-scheduler.js';
import type { LoadConfigOptions } from '../config/load.js';
import type { CoreConfig } from '../config/types.js';
import type { SqlitePendingCallStore } from '../conversation/pending-store.js';
import type { SqliteProfileStore } from '../conversation/profile-store.js';
import type { Dispatcher } from '../dispatch/dispatcher.js';
import type { Logger } from '../log.js';
import type { CoreMetrics } from '../observability/core-metrics.js';
import type { Readiness } from '../observability/readiness.js';
import type { Registry } from '../registry/registry.js';
import type { Retrieval } from '../retrieval/retrieval.js';

export interface CoreContext {
  config: CoreConfig;
  log: Logger;
  db: Database.Database;
  bus: CoreBus;
  broker?: EmbeddedBrokerHandle;
  registry: Registry;
  dispatcher: Dispatcher;
  credentials: CredentialStore;
  profiles: SqliteProfileStore;
  pendingCalls: SqlitePendingCallStore;
  /** The adapters by plugin type; the dispatcher and the attachments read this same map. */
  adapters: AdapterMap;
  http: HttpServer;
  retrieval: Retrieval;
  /** Delivers messages for users outside a request (plugins' notify, reminders, scheduled tasks). */
  notifier: Notifier;
  /** null when scheduler.enabled is false. */
  scheduler: TaskScheduler | null;
  /** Named up/down checks behind GET /readyz; a room adds its own with readiness.add(name, probe). */
  readiness: Readiness;
  policy: AccessPolicy;
  users: UserTokenStore;
  audit: AuditLog;
  /** The Prometheus metrics behind GET /metrics; absent when metrics.enabled is false. */
  metrics?: CoreMetrics;
}

export interface RunningCore {
  ctx: CoreContext;
  /** Actual ports (useful when the config asked for ephemeral ones). */
  mqttPort: number | null;
  wsPort: number | null;
  httpPort: number;
  httpUrl: string;
  /** Port of the Wyoming conversation agent; null when wyoming.port is not set. */
  wyomingPort: number | null;
  adminToken: string;
  stop(): Promise<void>;
}

export class ConfigError extends Error {}

/** Home Assistant needs an MQTT 5 broker from 2027.1 and cannot share the embedded one (MQTT 3.1.1). */
export const EMBEDDED_DISCOVERY_WARNING =
  'homeassistant.discovery is on but the Core runs its embedded MQTT 3.1.1 broker: Home Assistant will not see the devices ' +
  'unless it connects to this broker, and from 2027.1 it needs an MQTT 5 broker. Set HOMECLAW_BROKER_URL to the broker ' +
  'Home Assistant uses (e.g. the Mosquitto add-on).';

export interface StartCoreOptions extends LoadConfigOptions {
  /** Use this config as is (tests); skips file and environment. */
  config?: CoreConfig;
  log?: Logger;
}

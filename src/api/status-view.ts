// The snapshot behind GET /api/status: version, uptime, broker, plugins by state, dispatcher, MQTT
// and retrieval counters, event-loop delay, LLM, built-ins, Python plugins and access. Computed per
// request from the live parts; secrets never appear (a broker URL's password is redacted).
import { accessStatus, type AccessStatusInput } from '../access/security-status.js';
import type { EmbeddedBrokerHandle } from '../bus/broker.js';
import type { CoreConfig } from '../config/types.js';
import type { PluginRecord } from '../registry/record.js';
import { redactUrl } from '../kit/redact-url.js';
import { packageVersion } from '../kit/package-version.js';

/** What the status reads from; each field is a live part of the Core. */
export interface StatusSources {
  config: CoreConfig;
  startedAt: number;
  broker: EmbeddedBrokerHandle | undefined;
  embeddedAccess: AccessStatusInput['embedded'];
  plugins: () => PluginRecord[];
  dispatcher: { getStats(): object };
  mqtt: () => object;
  retrieval: { status(): object };
  eventLoop: { snapshot(): object };
  /** V8's helper threads beside the event loop (garbage collection, compilation), fixed at process start. */
  v8HelperThreads: number;
  builtins: { status(): object };
  python: { status(): object };
  access: {
    credentials: () => number;
    users: () => number;
    policy: () => AccessStatusInput['policy'];
    audit: () => AccessStatusInput['audit'];
  };
}

export function statusView(sources: StatusSources): () => Record<string, unknown> {
  const { config, broker } = sources;
  return () => ({
    version: packageVersion(),
    uptime_sec: Math.round((Date.now() - sources.startedAt) / 1000),
    broker: broker
      ? { mode: 'embedded', host: broker.host, port: broker.tcpPort, ws_port: broker.wsPort, anonymous: broker.anonymousAllowed }
      : { mode: 'external', url: redactUrl(config.broker.url ?? '') },
    plugins: countByState(sources.plugins()),
    dispatcher: sources.dispatcher.getStats(),
    mqtt: sources.mqtt(),
    retrieval: sources.retrieval.status(),
    event_loop: { ...sources.eventLoop.snapshot(), v8_helper_threads: sources.v8HelperThreads },
    llm: config.llm.base_url ? { configured: true, base_url: config.llm.base_url, model: config.llm.model } : { configured: false },
    builtins: sources.builtins.status(),
    python: sources.python.status(),
    access: accessStatus({
      embedded: sources.embeddedAccess,
      credentials: sources.access.credentials(),
      users: sources.access.users(),
      channelBindings: Object.keys(config.access.channels),
      policy: sources.access.policy(),
      audit: sources.access.audit(),
    }),
  });
}

function countByState(records: PluginRecord[]): Record<string, number> {
  const counts: Record<string, number> = { total: records.length, online: 0, stale: 0, offline: 0, error: 0 };
  for (const r of records) counts[r.state] = (counts[r.state] ?? 0) + 1;
  return counts;
}

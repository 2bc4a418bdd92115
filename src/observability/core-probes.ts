// The readiness probes of the Core's own parts. Each reads state the part already keeps; none changes it.
import { connect } from 'node:net';
import type Database from 'better-sqlite3';
import type { EmbeddedBrokerHandle } from '../bus/broker.js';
import type { CoreBus } from '../bus/core-bus.js';
import type { RetrievalStatus } from '../retrieval/search-api.js';
import type { ProbeOutcome, ReadinessProbe } from './readiness.js';

/** The loopback address to reach a listener bound to a wildcard address. */
function reachableHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host;
}

/** Resolves when a TCP connection to host:port opens (closed again at once), rejects otherwise. */
export function tcpConnects(host: string, port: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: reachableHost(host), port });
    const onAbort = (): void => {
      socket.destroy();
      reject(new Error(`no TCP connection to ${host}:${port} in time`));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve();
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      signal.removeEventListener('abort', onAbort);
      reject(new Error(`TCP ${host}:${port}: ${error.code ?? error.message}`));
    });
  });
}

/**
 * Embedded broker: Aedes is open and its MQTT listener accepts a TCP connection (what every plugin
 * needs). External broker: the Core's MQTT session with it is up.
 */
export function brokerProbe(bus: CoreBus, broker: EmbeddedBrokerHandle | undefined): ReadinessProbe {
  if (broker) {
    return async (signal): Promise<ProbeOutcome> => {
      if (broker.aedes.closed) return { up: false, reason: 'the embedded broker is closed' };
      await tcpConnects(broker.host, broker.tcpPort, signal);
      return { up: true };
    };
  }
  return (): ProbeOutcome => {
    const connected = (bus as { connected?: boolean }).connected;
    return connected === false ? { up: false, reason: 'not connected to the external MQTT broker' } : { up: true };
  };
}

/** The registry's SQLite database answers a read of the plugins table. */
export function registryProbe(db: Database.Database): ReadinessProbe {
  return (): ProbeOutcome => {
    if (!db.open) return { up: false, reason: 'the registry database is closed' };
    db.prepare('SELECT count(*) AS n FROM plugins').get();
    return { up: true };
  };
}

/**
 * Retrieval is up when its lexical index covers every registered plugin, so every plugin can be found.
 * Dense search degraded to BM25 (Chroma or the embedder down, or still starting) is still up: messages
 * are answered and routed, with lower recall; failing readiness would make an orchestrator withhold
 * traffic from or restart a Core that works, which cannot bring Chroma back. /api/status and the log
 * say when and why retrieval is degraded.
 */
export function retrievalProbe(retrieval: { status(): RetrievalStatus }, registeredPlugins: () => number): ReadinessProbe {
  return (): ProbeOutcome => {
    const indexed = retrieval.status().indexed;
    const registered = registeredPlugins();
    return indexed === registered ? { up: true } : { up: false, reason: `${indexed} of ${registered} registered plugins are indexed` };
  };
}

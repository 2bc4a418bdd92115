// Polls the health of plugins that cannot report their own liveness (http plugins). After
// `failure_threshold` failed checks in a row an online plugin becomes stale (kept, not routed to);
// the next successful check brings a stale plugin back online.
import type { Logger } from '../log.js';
import type { PluginRecord } from '../registry/record.js';
import type { RegistryApi } from '../registry/registry-api.js';
import type { HealthReport } from '../adapters/adapter.js';
import { errorMessage } from '../kit/error-message.js';

export interface HealthPollerOptions {
  registry: RegistryApi;
  log: Logger;
  interval_ms: number;
  failure_threshold: number;
  check: (record: PluginRecord) => Promise<HealthReport>;
}

export interface HealthPoller {
  /** Starts (or restarts) polling one plugin; the first check runs at once. */
  watch(pluginId: string): void;
  unwatch(pluginId: string): void;
  watching(): string[];
  stop(): void;
}

interface Watched {
  timer: NodeJS.Timeout;
  failures: number;
  running: boolean;
}

export function createHealthPoller(options: HealthPollerOptions): HealthPoller {
  const { registry, log } = options;
  const threshold = Math.max(1, Math.floor(options.failure_threshold));
  const watched = new Map<string, Watched>();

  async function checkOnce(pluginId: string, entry: Watched): Promise<void> {
    // Why skip: a health URL slower than the interval must not pile up concurrent probes.
    if (entry.running) return;
    const record = registry.get(pluginId);
    if (!record) return;
    entry.running = true;
    let report: HealthReport;
    try {
      report = await options.check(record);
    } catch (err) {
      report = { ok: false, detail: errorMessage(err) };
    } finally {
      entry.running = false;
    }
    if (watched.get(pluginId) !== entry) return; // unwatched while the check ran
    const current = registry.get(pluginId);
    if (!current) return;
    if (report.ok) {
      entry.failures = 0;
      if (current.state === 'stale') registry.setState(pluginId, 'online', 'health check passed');
      return;
    }
    entry.failures++;
    log.debug({ plugin_id: pluginId, failures: entry.failures, detail: report.detail }, 'health check failed');
    if (entry.failures >= threshold && current.state === 'online') {
      registry.setState(pluginId, 'stale', `health check failed ${entry.failures} times in a row: ${report.detail ?? 'unhealthy'}`);
    }
  }

  function unwatch(pluginId: string): void {
    const entry = watched.get(pluginId);
    if (!entry) return;
    clearInterval(entry.timer);
    watched.delete(pluginId);
  }

  return {
    watch(pluginId) {
      unwatch(pluginId);
      const entry: Watched = { failures: 0, running: false, timer: undefined as unknown as NodeJS.Timeout };
      entry.timer = setInterval(() => void checkOnce(pluginId, entry), Math.max(10, options.interval_ms));
      entry.timer.unref();
      watched.set(pluginId, entry);
      void checkOnce(pluginId, entry);
    },
    unwatch,
    watching() {
      return [...watched.keys()];
    },
    stop() {
      for (const id of [...watched.keys()]) unwatch(id);
    },
  };
}

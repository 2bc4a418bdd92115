// Invocation metrics: how many calls ended per plugin, capability and outcome, and how long the calls that
// reached a plugin took. Every invocation's `invocation.finished` event lands here — `ended` for each
// call, run or refused (its audit record), `finished` too for each call that reached a plugin's queue.
// An invocation costs a map lookup and a few additions; prom-client reads the totals when /metrics is
// scraped.
//
// Labels stay bounded. Plugin and capability ids are taken only from the registry, never from a caller:
// an unregistered plugin is counted as plugin="_unknown", an unknown capability of a registered plugin as
// capability="_unknown". At most max_series (plugin, capability) pairs are kept; further pairs share
// plugin="_other", capability="_other". A removed plugin's series go with it, and so do those of
// capabilities a new descriptor drops. Users, requests and parameters never become labels.
import { Counter, type Registry } from 'prom-client';
import type { InvocationAudit } from '../dispatch/dispatcher-api.js';
import type { InvocationRecord } from '../dispatch/dispatcher.js';
import type { InvocationEventBus } from '../dispatch/invocation-events.js';
import type { Logger } from '../log.js';
import type { ErrorCode } from '../protocol/types.js';
import type { RegistryApi } from '../registry/registry-api.js';
import { SeriesHistogram, type HistogramSeries } from './series-histogram.js';

export const UNKNOWN_LABEL = '_unknown';
export const OTHER_LABEL = '_other';

/** Seconds: from a built-in's millisecond answer to a slow device or a model-backed plugin's minute. */
export const INVOCATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Every outcome label: "ok" and the Core's error codes (a plugin's own code outside them reads plugin_error). */
const ERROR_CODES: Record<ErrorCode, true> = {
  not_found: true,
  invalid_params: true,
  offline: true,
  stale: true,
  busy: true,
  timeout: true,
  plugin_error: true,
  adapter_error: true,
  cancelled: true,
  forbidden: true,
  confirmation_required: true,
};

function outcomeLabel(outcome: string): string {
  return outcome === 'ok' || Object.hasOwn(ERROR_CODES, outcome) ? outcome : 'plugin_error';
}

interface Series {
  plugin: string;
  capability: string;
  /** Per outcome: the count so far and the part already handed to the prom-client counter. */
  outcomes: Map<string, { total: number; pushed: number }>;
  /** Opened by the first call that ran: a pair only ever refused has no durations to show. */
  duration: HistogramSeries | undefined;
}

export interface InvocationMetricsOptions {
  registry: RegistryApi;
  log: Logger;
  /** Distinct (plugin, capability) pairs kept; more share the "_other" series. */
  max_series: number;
}

export class InvocationMetrics {
  private readonly registry: RegistryApi;
  private readonly log: Logger;
  private readonly maxSeries: number;
  /** Admitted pairs by "plugin\0capability"; only registered pairs are ever keys. */
  private readonly byKey = new Map<string, Series>();
  private readonly byPlugin = new Map<string, Set<Series>>();
  /** "_unknown" and "_other" series, outside the max_series count. */
  private readonly shared = new Map<string, Series>();
  private warnedFull = false;
  private readonly counter: Counter<'plugin' | 'capability' | 'outcome'>;
  private readonly histogram: SeriesHistogram<'plugin' | 'capability'>;
  private readonly unsubscribe: (() => void)[];

  constructor(options: InvocationMetricsOptions) {
    this.registry = options.registry;
    this.log = options.log;
    this.maxSeries = options.max_series;
    const pushCounts = (): void => this.pushCounts();
    this.counter = new Counter({
      name: 'homeclaw_invocations_total',
      help: 'Invocations that ended, by plugin, capability and outcome ("ok" or the error code), refusals included.',
      labelNames: ['plugin', 'capability', 'outcome'],
      registers: [],
      collect: pushCounts,
    });
    this.histogram = new SeriesHistogram(
      'homeclaw_invocation_duration_seconds',
      'Duration of the invocations that reached a plugin, from queueing to result, error or timeout.',
      ['plugin', 'capability'],
      INVOCATION_BUCKETS,
    );
    const events = options.registry.events;
    this.unsubscribe = [
      events.on('plugin.removed', ({ record }) => this.forget(record.descriptor.id, () => true)),
      events.on('plugin.updated', ({ record }) => {
        const kept = new Set(record.descriptor.capabilities.map((c) => c.id));
        this.forget(record.descriptor.id, (series) => series.capability !== UNKNOWN_LABEL && !kept.has(series.capability));
      }),
    ];
  }

  registerIn(registry: Registry): void {
    registry.registerMetric(this.counter);
    this.histogram.registerIn(registry);
  }

  /** Every invocation, run or refused: the dispatcher's audit record. */
  ended(entry: Pick<InvocationAudit, 'plugin_id' | 'capability_id' | 'outcome'>): void {
    const series = this.seriesFor(entry.plugin_id, entry.capability_id);
    const outcome = outcomeLabel(entry.outcome);
    const slot = series.outcomes.get(outcome);
    if (slot) slot.total++;
    else series.outcomes.set(outcome, { total: 1, pushed: 0 });
  }

  /** Every invocation that reached a plugin's queue, with its duration. */
  finished(record: Pick<InvocationRecord, 'plugin_id' | 'capability_id' | 'duration_ms'>): void {
    const series = this.seriesFor(record.plugin_id, record.capability_id);
    series.duration ??= this.histogram.open({ plugin: series.plugin, capability: series.capability });
    series.duration.observe(record.duration_ms / 1000);
  }

  /** Counts every invocation the bus reports as finished, until stop(). */
  follow(events: InvocationEventBus): void {
    this.unsubscribe.push(
      events.on('invocation.finished', ({ record, audit, refused }) => {
        this.ended(audit);
        if (!refused) this.finished(record);
      }),
    );
  }

  /** (plugin, capability) pairs with their own series now. */
  seriesCount(): number {
    return this.byKey.size;
  }

  stop(): void {
    for (const off of this.unsubscribe) off();
  }

  private seriesFor(pluginId: string, capabilityId: string): Series {
    return this.byKey.get(`${pluginId}\u0000${capabilityId}`) ?? this.admit(pluginId, capabilityId);
  }

  /** A pair seen for the first time: checked against the registry before it may become labels. */
  private admit(pluginId: string, capabilityId: string): Series {
    const record = this.registry.get(pluginId);
    if (!record) return this.sharedSeries(UNKNOWN_LABEL, UNKNOWN_LABEL);
    const known = record.descriptor.capabilities.some((c) => c.id === capabilityId);
    const capability = known ? capabilityId : UNKNOWN_LABEL;
    const key = `${pluginId}\u0000${capability}`;
    const existing = this.byKey.get(key);
    if (existing) return existing;
    if (this.byKey.size >= this.maxSeries) {
      if (!this.warnedFull) {
        this.warnedFull = true;
        this.log.warn(
          { max_series: this.maxSeries },
          'invocation metrics: more (plugin, capability) pairs than metrics.max_series; further pairs are counted under plugin="_other"',
        );
      }
      return this.sharedSeries(OTHER_LABEL, OTHER_LABEL);
    }
    const series = this.newSeries(pluginId, capability);
    this.byKey.set(key, series);
    let ofPlugin = this.byPlugin.get(pluginId);
    if (!ofPlugin) {
      ofPlugin = new Set();
      this.byPlugin.set(pluginId, ofPlugin);
    }
    ofPlugin.add(series);
    return series;
  }

  private sharedSeries(plugin: string, capability: string): Series {
    const key = `${plugin}\u0000${capability}`;
    let series = this.shared.get(key);
    if (!series) {
      series = this.newSeries(plugin, capability);
      this.shared.set(key, series);
    }
    return series;
  }

  private newSeries(plugin: string, capability: string): Series {
    return { plugin, capability, outcomes: new Map(), duration: undefined };
  }

  private forget(pluginId: string, drop: (series: Series) => boolean): void {
    const ofPlugin = this.byPlugin.get(pluginId);
    if (!ofPlugin) return;
    for (const series of [...ofPlugin]) {
      if (!drop(series)) continue;
      ofPlugin.delete(series);
      this.byKey.delete(`${series.plugin}\u0000${series.capability}`);
      if (series.duration) this.histogram.close(series.duration);
      for (const outcome of series.outcomes.keys()) {
        this.counter.remove({ plugin: series.plugin, capability: series.capability, outcome });
      }
    }
    if (ofPlugin.size === 0) this.byPlugin.delete(pluginId);
    if (this.byKey.size < this.maxSeries) this.warnedFull = false;
  }

  /** Hands what was counted since the last scrape to the prom-client counter. */
  private pushCounts(): void {
    for (const group of [this.byKey, this.shared]) {
      for (const series of group.values()) {
        for (const [outcome, slot] of series.outcomes) {
          if (slot.total === slot.pushed) continue;
          this.counter.inc({ plugin: series.plugin, capability: series.capability, outcome }, slot.total - slot.pushed);
          slot.pushed = slot.total;
        }
      }
    }
  }
}

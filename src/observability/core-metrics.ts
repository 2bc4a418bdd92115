// The Core's Prometheus metrics, served at GET /metrics. One prom-client Registry per Core holds the
// homeclaw_* metrics; the process-wide registry (process-metrics.ts) adds the standard process_* and
// nodejs_* metrics to every scrape.
//
// Work on the hot paths is a counter bump in plain numbers (invocations, MQTT messages); everything that
// can be read from a service when Prometheus asks (plugins by state, calls in flight, MQTT clients,
// retrieval state, event-loop delay) is read at scrape time and costs nothing in between.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Counter, Gauge, Registry } from 'prom-client';
import type { EmbeddedBrokerHandle } from '../bus/broker.js';
import type { BusTraffic } from '../bus/core-bus.js';
import type { LlmClient } from '../conversation/llm-client.js';
import type { Logger } from '../log.js';
import { findPackageRoot } from '../kit/package-root.js';
import type { PluginState } from '../registry/record.js';
import type { InvocationEventBus } from '../dispatch/invocation-events.js';
import type { RegistryApi } from '../registry/registry-api.js';
import type { PluginSearchApi, RetrievalStatus } from '../retrieval/search-api.js';
import type { EventLoopDelay } from './event-loop-monitor.js';
import { InvocationMetrics } from './invocation-metrics.js';
import { LlmMetrics } from './llm-metrics.js';
import { processMetricsRegistry } from './process-metrics.js';
import { RetrievalMetrics } from './retrieval-metrics.js';

const PLUGIN_STATES: readonly PluginState[] = ['online', 'stale', 'offline', 'error'];

export interface CoreMetricsOptions {
  registry: RegistryApi;
  log: Logger;
  /** metrics.max_series: (plugin, capability) pairs in the invocation metrics. */
  max_series: number;
  /** Reported in homeclaw_build_info; default: the package's version. */
  version?: string;
  /** The bus of `invocation.finished`: every invocation is counted from it. */
  events?: InvocationEventBus;
}

/** Services read when metrics are scraped; they exist only after the Core has built them. */
export interface ScrapedSources {
  /** The Core bus's message counts. */
  traffic?: BusTraffic;
  broker?: EmbeddedBrokerHandle;
  dispatcher: { getStats(): { in_flight: number } };
  retrieval: { status(): RetrievalStatus };
  /** The Core's event-loop delay monitor (the one /api/status reports). */
  eventLoop: { snapshot(): EventLoopDelay };
}

export class CoreMetrics {
  readonly invocations: InvocationMetrics;
  private readonly own = new Registry();
  private llmMetrics: LlmMetrics | undefined;
  private retrievalMetrics: RetrievalMetrics | undefined;

  constructor(options: CoreMetricsOptions) {
    this.invocations = new InvocationMetrics({ registry: options.registry, log: options.log, max_series: options.max_series });
    if (options.events) this.invocations.follow(options.events);
    this.invocations.registerIn(this.own);
    new Gauge({
      name: 'homeclaw_build_info',
      help: 'Always 1; the labels say which HomeClaw version runs on which Node.js.',
      labelNames: ['version', 'node_version'],
      registers: [this.own],
    }).set({ version: options.version ?? packageVersion(), node_version: process.version }, 1);
    const plugins = options.registry;
    new Gauge({
      name: 'homeclaw_plugins',
      help: 'Registered plugins by liveness state (online, stale, offline, error).',
      labelNames: ['state'],
      registers: [this.own],
      collect() {
        const counts = new Map<string, number>(PLUGIN_STATES.map((state) => [state, 0]));
        for (const record of plugins.list()) counts.set(record.state, (counts.get(record.state) ?? 0) + 1);
        for (const [state, count] of counts) this.set({ state }, count);
      },
    });
  }

  /** The LLM client, counted (requests, errors, tokens, duration); without an LLM there are no LLM metrics. */
  meterLlm(client: LlmClient | null): LlmClient | null {
    if (!client) return null;
    this.llmMetrics ??= new LlmMetrics(this.own);
    return this.llmMetrics.meter(client);
  }

  /** The search API, counted by mode; `denseConfigured` is retrieval.enabled. */
  meterSearch(api: PluginSearchApi, denseConfigured: boolean): PluginSearchApi {
    this.retrievalMetrics ??= new RetrievalMetrics(this.own, () => api.status());
    return this.retrievalMetrics.meter(api, denseConfigured);
  }

  /** Adds the metrics read from running services at scrape time. Call once, when they exist. */
  watch(sources: ScrapedSources): void {
    const { traffic, broker, dispatcher, eventLoop } = sources;
    new Gauge({
      name: 'homeclaw_invocations_in_flight',
      help: 'Invocations sent to plugins (or waiting in their queues) that have not ended yet.',
      registers: [this.own],
      collect() {
        this.set(dispatcher.getStats().in_flight);
      },
    });
    if (traffic) {
      const fromTraffic = (name: string, help: string, read: (t: BusTraffic) => number): void => {
        let pushed = 0;
        new Counter({
          name,
          help,
          registers: [this.own],
          collect() {
            const total = read(traffic);
            this.inc(Math.max(0, total - pushed));
            pushed = total;
          },
        });
      };
      fromTraffic('homeclaw_mqtt_messages_received_total', 'MQTT messages delivered to the Core (to at least one of its subscriptions).', (t) => t.received);
      fromTraffic('homeclaw_mqtt_messages_published_total', 'MQTT messages the Core published.', (t) => t.published);
      fromTraffic('homeclaw_mqtt_received_bytes_total', 'Payload bytes of the MQTT messages delivered to the Core.', (t) => t.received_bytes);
      fromTraffic('homeclaw_mqtt_published_bytes_total', 'Payload bytes of the MQTT messages the Core published.', (t) => t.published_bytes);
    }
    const delay = (name: string, help: string, read: (d: EventLoopDelay) => number): void => {
      new Gauge({
        name,
        help,
        registers: [this.own],
        collect() {
          this.set(read(eventLoop.snapshot()) / 1000);
        },
      });
    };
    delay('homeclaw_event_loop_delay_p50_seconds', 'Median event-loop delay over the last complete window (10 s).', (d) => d.p50_ms);
    delay('homeclaw_event_loop_delay_p99_seconds', '99th percentile of the event-loop delay over the last complete window (10 s).', (d) => d.p99_ms);
    delay('homeclaw_event_loop_delay_max_seconds', 'Longest event-loop delay over the last complete window (10 s).', (d) => d.max_ms);
    if (broker) {
      new Gauge({
        name: 'homeclaw_mqtt_clients_connected',
        help: 'MQTT clients connected to the embedded broker (plugins, channels, tools).',
        registers: [this.own],
        collect() {
          this.set(broker.aedes.connectedClients);
        },
      });
    }
  }

  get contentType(): string {
    return this.own.contentType;
  }

  /** The Prometheus text exposition of every metric, the process's included. */
  scrape(): Promise<string> {
    // Merged per scrape: metrics are added to the Core's registry as services come up.
    return Registry.merge([processMetricsRegistry(), this.own]).metrics();
  }

  stop(): void {
    this.invocations.stop();
  }
}

function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(findPackageRoot(), 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : 'unknown';
  } catch {
    return 'unknown';
  }
}

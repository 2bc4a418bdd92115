// The homeclaw_event_loop_delay_* gauges: how long ready work (an MQTT message, an HTTP request, a
// plugin's result) waited for the event loop over a recent window. Every message queues behind whatever
// runs on the loop, so a rising delay is the first sign that CPU-heavy work got onto it.
//
// The gauges read any source with snapshot(). EventLoopDelayWindow is a small one: perf_hooks'
// monitorEventLoopDelay, read and reset every window so the figures describe the last seconds rather
// than the whole uptime. A monitor the Core already runs for /api/status can be passed instead.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';

export interface EventLoopDelaySnapshot {
  /** Delay percentiles over the window, in milliseconds (the sampling interval itself subtracted). */
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  /** The window the figures cover, in seconds. */
  window_sec: number;
}

export interface EventLoopDelaySource {
  snapshot(): EventLoopDelaySnapshot;
}

export function registerEventLoopDelayGauges(registry: Registry, source: EventLoopDelaySource): void {
  const gauge = (name: string, help: string, read: (s: EventLoopDelaySnapshot) => number): Gauge =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(source.snapshot()) / 1000);
      },
    });
  gauge('homeclaw_event_loop_delay_p50_seconds', 'Median event-loop delay over the last window (10 s).', (s) => s.p50_ms);
  gauge('homeclaw_event_loop_delay_p99_seconds', '99th percentile of the event-loop delay over the last window (10 s).', (s) => s.p99_ms);
  gauge('homeclaw_event_loop_delay_max_seconds', 'Longest event-loop delay over the last window (10 s).', (s) => s.max_ms);
}

export class EventLoopDelayWindow implements EventLoopDelaySource {
  private readonly histogram: IntervalHistogram;
  private readonly timer: NodeJS.Timeout;
  private last: EventLoopDelaySnapshot | undefined;
  private windowStartedAt = Date.now();
  private readonly resolutionMs: number;

  constructor(resolutionMs = 10, windowSec = 10) {
    this.resolutionMs = resolutionMs;
    this.histogram = monitorEventLoopDelay({ resolution: resolutionMs });
    this.histogram.enable();
    this.timer = setInterval(() => {
      this.last = this.read(windowSec);
      this.histogram.reset();
      this.windowStartedAt = Date.now();
    }, windowSec * 1000);
    this.timer.unref();
  }

  /** The last complete window; before the first one ends, what was measured so far. */
  snapshot(): EventLoopDelaySnapshot {
    return this.last ?? this.read((Date.now() - this.windowStartedAt) / 1000);
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }

  private read(windowSec: number): EventLoopDelaySnapshot {
    const h = this.histogram;
    // A sample is the time between two timer ticks, so the interval itself is subtracted.
    const ms = (ns: number): number => (h.count > 0 && Number.isFinite(ns) ? Math.max(0, ns / 1e6 - this.resolutionMs) : 0);
    return { p50_ms: ms(h.percentile(50)), p99_ms: ms(h.percentile(99)), max_ms: ms(h.max), window_sec: Math.max(0, windowSec) };
  }
}

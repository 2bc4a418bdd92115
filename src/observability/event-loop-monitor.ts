// How long the Core's event loop makes ready work wait: every MQTT message, HTTP request and plugin
// result queues behind whatever runs on it, so a rising delay is the first sign that something CPU-heavy
// got onto the loop. Measured with perf_hooks.monitorEventLoopDelay over rolling windows, so the figures
// describe the last few seconds rather than the whole uptime.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface EventLoopDelay {
  /** Delay percentiles in milliseconds over the window (the sampling interval itself subtracted). */
  p50_ms: number;
  p99_ms: number;
  max_ms: number;
  /** The window the figures cover, in seconds. */
  window_sec: number;
}

export interface EventLoopMonitorOptions {
  /** Sampling interval of the histogram in milliseconds. */
  resolution_ms?: number;
  /** Length of one window; the latest complete window is reported. */
  window_sec?: number;
}

export class EventLoopMonitor {
  private readonly histogram: IntervalHistogram;
  private readonly resolutionMs: number;
  private readonly windowSec: number;
  private readonly timer: NodeJS.Timeout;
  private last: EventLoopDelay | undefined;
  private windowStarted = Date.now();

  constructor(options: EventLoopMonitorOptions = {}) {
    this.resolutionMs = options.resolution_ms ?? 10;
    this.windowSec = options.window_sec ?? 10;
    this.histogram = monitorEventLoopDelay({ resolution: this.resolutionMs });
    this.histogram.enable();
    this.timer = setInterval(() => {
      this.last = this.read(this.windowSec);
      this.histogram.reset();
      this.windowStarted = Date.now();
    }, this.windowSec * 1000);
    this.timer.unref();
  }

  /** The latest complete window; until one has passed, what was measured so far. */
  snapshot(): EventLoopDelay {
    return this.last ?? this.read(Math.max(0.001, (Date.now() - this.windowStarted) / 1000));
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }

  private read(windowSec: number): EventLoopDelay {
    // Each sample is the time between two timer ticks, so the interval itself is subtracted.
    const ms = (ns: number): number => (Number.isFinite(ns) && this.histogram.count > 0 ? Math.max(0, round(ns / 1e6 - this.resolutionMs)) : 0);
    return {
      p50_ms: ms(this.histogram.percentile(50)),
      p99_ms: ms(this.histogram.percentile(99)),
      max_ms: ms(this.histogram.max),
      window_sec: round(windowSec),
    };
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

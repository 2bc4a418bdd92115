// The event-loop monitor reports delays the loop really had (a busy loop we cause ourselves), as
// percentiles over a window, without the sampling interval itself.
import { afterEach, describe, expect, it } from 'vitest';
import { EventLoopMonitor } from '../../src/observability/event-loop-monitor.js';

const monitors: EventLoopMonitor[] = [];
afterEach(() => {
  for (const monitor of monitors.splice(0)) monitor.stop();
});

function block(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // Keep the event loop busy on purpose.
  }
}

describe('EventLoopMonitor', () => {
  it('sees a 200 ms block of the event loop in its max and keeps p50 <= p99 <= max', async () => {
    const monitor = new EventLoopMonitor({ resolution_ms: 10, window_sec: 60 });
    monitors.push(monitor);
    await new Promise((r) => setTimeout(r, 100));
    block(200);
    await new Promise((r) => setTimeout(r, 50));
    const snapshot = monitor.snapshot();
    expect(snapshot.max_ms).toBeGreaterThanOrEqual(150);
    expect(snapshot.p50_ms).toBeLessThanOrEqual(snapshot.p99_ms);
    expect(snapshot.p99_ms).toBeLessThanOrEqual(snapshot.max_ms);
    expect(snapshot.window_sec).toBeGreaterThan(0);
  });

  it('reports the latest complete window once one has passed, and what it has so far before that', async () => {
    const monitor = new EventLoopMonitor({ resolution_ms: 10, window_sec: 0.5 });
    monitors.push(monitor);
    // Synchronously after the start no window can have completed: the figures cover the time so far.
    expect(monitor.snapshot().window_sec).toBeLessThan(0.5);
    await new Promise((r) => setTimeout(r, 1200));
    expect(monitor.snapshot().window_sec).toBe(0.5);
  });
});

// What the Home Assistant devices report about invocations: calls per minute for the Core, and each
// plugin's last outcome and latency. Counted in one-second buckets, so a busy bus costs a fixed 60 slots,
// not one entry per call.
import type { InvocationRecord } from '../../../dispatch/dispatcher.js';

const WINDOW_SEC = 60;

export interface LastInvocation {
  /** "success" or the error code. */
  outcome: string;
  latency_ms: number;
}

export class InvocationActivity {
  private readonly buckets = new Array<number>(WINDOW_SEC).fill(0);
  private readonly bucketSecond = new Array<number>(WINDOW_SEC).fill(-1);
  private readonly last = new Map<string, LastInvocation>();

  constructor(private readonly now: () => number = Date.now) {}

  record(invocation: InvocationRecord): void {
    const second = Math.floor(this.now() / 1000);
    const slot = second % WINDOW_SEC;
    if (this.bucketSecond[slot] !== second) {
      this.bucketSecond[slot] = second;
      this.buckets[slot] = 0;
    }
    this.buckets[slot] = (this.buckets[slot] ?? 0) + 1;
    this.last.set(invocation.plugin_id, {
      outcome: invocation.success ? 'success' : (invocation.error_code ?? 'plugin_error'),
      latency_ms: Math.max(0, Math.round(invocation.duration_ms)),
    });
  }

  /** Invocations that ended in the last 60 seconds. */
  callsPerMinute(): number {
    const second = Math.floor(this.now() / 1000);
    let total = 0;
    for (let slot = 0; slot < WINDOW_SEC; slot++) {
      const stamp = this.bucketSecond[slot] ?? -1;
      if (stamp > second - WINDOW_SEC && stamp <= second) total += this.buckets[slot] ?? 0;
    }
    return total;
  }

  lastOf(pluginId: string): LastInvocation | undefined {
    return this.last.get(pluginId);
  }

  forget(pluginId: string): void {
    this.last.delete(pluginId);
  }
}

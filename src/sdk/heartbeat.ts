// Periodic proof of life on heartbeat/<id>. QoS 0: a lost heartbeat is replaced by the next one, and the
// Core tolerates a grace period before it marks the plugin stale.
import type { HeartbeatMessage } from '../protocol/types.js';

export interface HeartbeatDeps {
  epoch: number;
  interval_ms: number;
  /** Returns false when nothing could be sent (not connected): the beat is skipped, not queued. */
  send(message: HeartbeatMessage): boolean;
}

export class Heartbeat {
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;

  constructor(private readonly deps: HeartbeatDeps) {}

  /** Idempotent: a second start keeps the running schedule. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.beat(), this.deps.interval_ms);
    // A heartbeat alone must not keep a plugin process alive after close().
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  get sent(): number {
    return this.seq;
  }

  private beat(): void {
    const message: HeartbeatMessage = { epoch: this.deps.epoch, seq: this.seq + 1, ts: Date.now() };
    if (this.deps.send(message)) this.seq = message.seq;
  }
}

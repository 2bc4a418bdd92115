// Retained commands on an external broker. A command (register, heartbeat, result, a call...) is acted on
// once, when it is sent; a retained copy the broker replays on every subscription is ignored, removed (an
// empty retained message deletes it) so no later subscription replays it again, and logged once per topic.
import type { Logger } from '../log.js';

/** Bound on the per-topic bookkeeping, which a client could otherwise grow at will. */
const MAX_TRACKED_TOPICS = 1_000;

export class RetainedCommandCleaner {
  /** Topics whose retained message was just cleared: the broker echoes the empty message once. */
  private readonly clearing = new Set<string>();
  /** Topics already reported, so a topic is logged once, not at every reconnect. */
  private readonly reported = new Set<string>();

  constructor(
    private readonly log: Logger,
    /** Publishes the empty retained message (QoS 1); calls back with an error when the broker refused it. */
    private readonly publishEmptyRetained: (topic: string, done: (error?: Error) => void) => void,
  ) {}

  /** A replayed retained command: ignore it and delete it on the broker. */
  clear(topic: string, payload: Buffer): void {
    if (payload.length === 0) return;
    if (this.reported.size >= MAX_TRACKED_TOPICS) this.reported.clear();
    if (!this.reported.has(topic)) {
      this.reported.add(topic);
      this.log.warn({ topic, bytes: payload.length }, 'retained command ignored and cleared: commands are acted on only when sent');
    }
    if (this.clearing.size >= MAX_TRACKED_TOPICS) this.clearing.clear();
    this.clearing.add(topic);
    this.publishEmptyRetained(topic, (error) => {
      if (error) {
        this.clearing.delete(topic);
        this.log.warn({ topic, err: error.message }, 'could not clear a retained command (check the broker ACL)');
      }
    });
  }

  /** True for the broker's echo of a deletion the Core just made (swallowed, once). */
  isEchoOfClearing(topic: string, payload: Buffer): boolean {
    return payload.length === 0 && this.clearing.size > 0 && this.clearing.delete(topic);
  }
}

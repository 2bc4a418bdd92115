// How many messages a plugin may send one user: a token bucket per (plugin, user) that holds
// `perMinute` messages and refills at that rate. A doorbell or a camera's alerts come in short bursts and
// stay far below it; a plugin stuck in a loop (or taken over) would otherwise ring the user's phone
// thousands of times a minute, and a home has no operator to notice.
import { TokenBuckets } from '../kit/token-buckets.js';

export class NotificationBudget {
  private readonly buckets: TokenBuckets;

  constructor(
    readonly perMinute: number,
    now: () => number = Date.now,
  ) {
    this.buckets = new TokenBuckets(perMinute, now);
  }

  /** True (and one message is spent) when the plugin may send this user a message now. */
  take(pluginId: string, userId: string): boolean {
    return this.buckets.take(`${pluginId}\u0000${userId}`);
  }
}

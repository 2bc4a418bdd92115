// How many messages a plugin may send one user: a token bucket per (plugin, user) that holds
// `perMinute` messages and refills at that rate. A doorbell or a camera's alerts come in short bursts and
// stay far below it; a plugin stuck in a loop (or taken over) would otherwise ring the user's phone
// thousands of times a minute, and a home has no operator to notice.

export class NotificationBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** True (and one message is spent) when the plugin may send this user a message now. */
  take(pluginId: string, userId: string): boolean {
    const key = `${pluginId}\u0000${userId}`;
    const now = this.now();
    const bucket = this.buckets.get(key) ?? { tokens: this.perMinute, at: now };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + ((now - bucket.at) * this.perMinute) / 60_000);
    bucket.at = now;
    if (bucket.tokens < 1) {
      this.buckets.set(key, bucket);
      return false;
    }
    bucket.tokens -= 1;
    this.buckets.set(key, bucket);
    if (this.buckets.size > 10_000) this.forgetFull(now);
    return true;
  }

  /** A bucket that has refilled completely is the same as none. */
  private forgetFull(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) * this.perMinute) / 60_000 >= this.perMinute) this.buckets.delete(key);
    }
  }
}

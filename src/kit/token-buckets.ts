// A token bucket per key: each holds `perMinute` tokens and refills at that rate, so a key may spend a
// burst of `perMinute` at once and then `perMinute` a minute. Buckets that have refilled completely are
// forgotten when many keys have been seen, so memory stays bounded by the keys active within a minute.

export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** True (and one token is spent) when `key` may act now. */
  take(key: string): boolean {
    const now = this.now();
    const bucket = this.refilled(key, now);
    this.buckets.set(key, bucket);
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    if (this.buckets.size > 10_000) this.forgetFull(now);
    return true;
  }

  /** Milliseconds until `key` may act again; 0 when it may now. Spends nothing. */
  waitMs(key: string): number {
    const bucket = this.refilled(key, this.now());
    return bucket.tokens >= 1 ? 0 : Math.ceil(((1 - bucket.tokens) * 60_000) / this.perMinute);
  }

  private refilled(key: string, now: number): { tokens: number; at: number } {
    const bucket = this.buckets.get(key);
    if (!bucket) return { tokens: this.perMinute, at: now };
    return { tokens: Math.min(this.perMinute, bucket.tokens + ((now - bucket.at) * this.perMinute) / 60_000), at: now };
  }

  private forgetFull(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + ((now - bucket.at) * this.perMinute) / 60_000 >= this.perMinute) this.buckets.delete(key);
    }
  }
}

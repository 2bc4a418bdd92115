// Failed attempts per key (a client address) in a fixed window: the consent page accepts tokens from
// anyone who can reach it, and an admin token set by hand may be short enough to guess, so guessing is
// slowed down to a handful of tries per window. Memory stays bounded: windows are dropped once over.

export interface AttemptLimiterSettings {
  /** Failures allowed per key within one window. */
  max_failures: number;
  window_ms: number;
  /** Keys tracked at once; beyond it the oldest window is forgotten. */
  max_keys?: number;
}

interface Window {
  started: number;
  failures: number;
}

export class AttemptLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly settings: AttemptLimiterSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** Milliseconds until the key may try again, or 0 when it may try now. */
  blockedFor(key: string): number {
    const window = this.current(key);
    if (!window || window.failures < this.settings.max_failures) return 0;
    return window.started + this.settings.window_ms - this.now();
  }

  fail(key: string): void {
    const window = this.current(key) ?? { started: this.now(), failures: 0 };
    window.failures += 1;
    this.windows.delete(key);
    this.windows.set(key, window);
    const max = this.settings.max_keys ?? 10_000;
    while (this.windows.size > max) {
      const oldest = this.windows.keys().next().value;
      if (oldest === undefined) break;
      this.windows.delete(oldest);
    }
  }

  private current(key: string): Window | undefined {
    const window = this.windows.get(key);
    if (window && this.now() - window.started >= this.settings.window_ms) {
      this.windows.delete(key);
      return undefined;
    }
    return window;
  }
}

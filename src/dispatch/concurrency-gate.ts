// How many calls of one plugin run at once; the rest wait in arrival order. A plugin's queue sits on the
// path of every invocation, so this is a counter and an array rather than a general-purpose queue: no
// promise, event or timer per call.

export class ConcurrencyGate {
  private runningCount = 0;
  private readonly waitingStarts: (() => void)[] = [];
  private head = 0;

  constructor(readonly concurrency: number) {}

  get running(): number {
    return this.runningCount;
  }

  get waiting(): number {
    return this.waitingStarts.length - this.head;
  }

  /** Calls `start` now when a slot is free, otherwise when one frees up (first come, first served). */
  enter(start: () => void): void {
    if (this.runningCount < this.concurrency) {
      this.runningCount++;
      start();
      return;
    }
    this.waitingStarts.push(start);
  }

  /** Frees the caller's slot: the longest waiting start takes it over. Call exactly once per start. */
  leave(): void {
    if (this.head < this.waitingStarts.length) {
      const next = this.waitingStarts[this.head]!;
      this.waitingStarts[this.head++] = undefined as unknown as () => void;
      // Compact now and then so a long-lived gate does not keep a growing array of holes.
      if (this.head > 1024 && this.head * 2 > this.waitingStarts.length) {
        this.waitingStarts.splice(0, this.head);
        this.head = 0;
      }
      next();
      return;
    }
    this.runningCount--;
  }
}

// One log line per key per window, with the count of the ones left out: a client repeating the same
// mistake thousands of times a second must not turn into a log line each (the disk fills, the real
// lines drown).
import type { Logger } from '../log.js';

export class LogWindow {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly windowMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Undefined when a line for this key was logged within the window (this one is counted); else the
   * number of lines left out since the last one, to add to the line about to be logged.
   */
  admit(key: string): number | undefined {
    const now = this.now();
    const seen = this.last.get(key);
    if (seen && now - seen.at < this.windowMs) {
      seen.suppressed++;
      return undefined;
    }
    // Keys of clients long gone are dropped when the map grows; a window is all they would be kept for.
    if (this.last.size >= 10_000) this.last.clear();
    this.last.set(key, { at: now, suppressed: 0 });
    return seen?.suppressed ?? 0;
  }

  /** Logs a warning unless one for this key was logged within the window; `countField` carries the ones left out. */
  warn(log: Logger, key: string, detail: Record<string, unknown>, message: string, countField = 'similar_not_logged'): void {
    this.write(log, 'warn', key, detail, message, countField);
  }

  /** As warn, at info level (for refusals that are the client's mistake rather than a sign of attack). */
  info(log: Logger, key: string, detail: Record<string, unknown>, message: string, countField = 'similar_not_logged'): void {
    this.write(log, 'info', key, detail, message, countField);
  }

  private write(log: Logger, level: 'info' | 'warn', key: string, detail: Record<string, unknown>, message: string, countField: string): void {
    const suppressed = this.admit(key);
    if (suppressed === undefined) return;
    log[level]({ ...detail, ...(suppressed > 0 ? { [countField]: suppressed } : {}) }, message);
  }
}

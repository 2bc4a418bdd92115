// Readiness: a list of named checks, one per part the Core depends on (broker, registry, retrieval, and
// the LLM or Home Assistant when configured). Any room can add its own check through the Core context.
//
// What is served is only up/down per part: /readyz needs no credentials, so it must not tell a stranger
// on the LAN which URL, version or error a part has. Why a part is down goes to the log instead, once
// per change, so a flapping part does not flood it.
import type { Logger } from '../log.js';
import { errorMessage } from '../kit/error-message.js';

export type PartState = 'up' | 'down';

/** A probe's verdict; `reason` is logged when the part goes down, never served. */
export interface ProbeOutcome {
  up: boolean;
  reason?: string;
}

/**
 * Answers whether one part works right now. It receives a signal that aborts at the check's deadline;
 * a probe that throws, rejects or misses the deadline counts as down.
 */
export type ReadinessProbe = (signal: AbortSignal) => Promise<boolean | ProbeOutcome> | boolean | ProbeOutcome;

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, PartState>;
}

export interface ReadinessOptions {
  log: Logger;
  /** A probe that has not answered after this long is down (default 3 s). */
  timeoutMs?: number;
  /**
   * A report younger than this is served again (default 1 s): /readyz is unauthenticated, and a flood of
   * requests must not turn into a flood of probes against the LLM or Home Assistant.
   */
  cacheMs?: number;
}

const CHECK_NAME = /^[a-z][a-z0-9_-]{0,63}$/;

export class Readiness {
  private readonly probes = new Map<string, ReadinessProbe>();
  private readonly lastState = new Map<string, PartState>();
  private readonly log: Logger;
  private readonly timeoutMs: number;
  private readonly cacheMs: number;
  private inFlight: Promise<ReadinessReport> | undefined;
  private cached: { at: number; report: ReadinessReport } | undefined;

  constructor(options: ReadinessOptions) {
    this.log = options.log;
    this.timeoutMs = options.timeoutMs ?? 3000;
    this.cacheMs = options.cacheMs ?? 1000;
  }

  /** Adds a named check. Names are unique: two parts claiming one name is a wiring mistake, so it throws. */
  add(name: string, probe: ReadinessProbe): void {
    if (!CHECK_NAME.test(name)) throw new Error(`readiness check name "${name}" must match ${CHECK_NAME.source}`);
    if (this.probes.has(name)) throw new Error(`readiness check "${name}" is already registered`);
    this.probes.set(name, probe);
    this.cached = undefined;
  }

  names(): string[] {
    return [...this.probes.keys()];
  }

  /** Runs every check at once (or reuses a fresh or running evaluation); ready when every part is up. */
  check(): Promise<ReadinessReport> {
    if (this.cached && Date.now() - this.cached.at < this.cacheMs) return Promise.resolve(this.cached.report);
    this.inFlight ??= this.evaluate().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async evaluate(): Promise<ReadinessReport> {
    const entries = [...this.probes.entries()];
    const outcomes = await Promise.all(entries.map(([, probe]) => this.runProbe(probe)));
    const checks: Record<string, PartState> = {};
    entries.forEach(([name], i) => {
      const outcome = outcomes[i] as ProbeOutcome;
      const state: PartState = outcome.up ? 'up' : 'down';
      checks[name] = state;
      this.noteTransition(name, state, outcome.reason);
    });
    const report = { ready: Object.values(checks).every((state) => state === 'up'), checks };
    this.cached = { at: Date.now(), report };
    return report;
  }

  private async runProbe(probe: ReadinessProbe): Promise<ProbeOutcome> {
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<ProbeOutcome>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve({ up: false, reason: `no answer within ${this.timeoutMs} ms` });
      }, this.timeoutMs);
    });
    try {
      const answered = Promise.resolve()
        .then(() => probe(controller.signal))
        .then(
          (result): ProbeOutcome => (typeof result === 'boolean' ? { up: result } : result),
          (error: unknown): ProbeOutcome => ({ up: false, reason: errorMessage(error) }),
        );
      return await Promise.race([answered, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }

  private noteTransition(name: string, state: PartState, reason: string | undefined): void {
    const before = this.lastState.get(name);
    this.lastState.set(name, state);
    if (before === state) return;
    if (state === 'down') this.log.warn({ check: name, reason: reason ?? 'probe answered down' }, `readiness: ${name} is down`);
    else if (before === 'down') this.log.info({ check: name }, `readiness: ${name} is up again`);
  }
}

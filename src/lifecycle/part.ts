// A long-lived part of the Core (the database, the bus, an adapter's lifecycle, the HTTP API...) has one
// shape: a name, start() and stop(). The Core starts its parts in order and stops them in reverse, so
// each part stops before the parts it uses (the dispatcher before the audit log that records the
// endings of its cancelled calls, the HTTP API before everything it serves).
import type { Logger } from '../log.js';

export interface Part {
  readonly name: string;
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}

/** A part that is running once built (opened, connected, listening): starting it does nothing more. */
export function runningPart(name: string, stop: () => Promise<void> | void): Part {
  return { name, start: () => undefined, stop };
}

/** Starts parts one after another and stops those that started, in reverse order. */
export class PartRunner {
  private readonly started: Part[] = [];

  constructor(private readonly log: Logger) {}

  /** Starts the part; once started it is stopped by stopAll(). A part that fails to start is not. */
  async start(part: Part): Promise<void> {
    await part.start();
    this.started.push(part);
  }

  /** Stops every started part, newest first; a part that fails to stop is logged and the rest go on. */
  async stopAll(): Promise<void> {
    for (const part of this.started.splice(0).reverse()) {
      try {
        await part.stop();
      } catch (err) {
        this.log.error({ err, component: part.name }, 'component failed to stop');
      }
    }
  }
}

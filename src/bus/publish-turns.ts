// A fair share of the event loop for every client of the embedded broker. The broker reads a client's
// socket and hands every PUBLISH it finds to the Core at once; libuv reads up to 32 chunks of 64 KiB from a
// busy socket per turn, so one client sending as fast as it can (a broken loop in a plugin, or an attacker
// with a login) made the Core handle ~30,000 messages without once returning to the event loop: every
// timer, HTTP request and other client waited 0.2–0.8 s, again and again, for as long as it kept sending.
//
// Each client may have `perTurn` messages admitted per turn of the event loop; the rest wait, in order, for
// later turns. While any of a client's messages wait, the broker reads nothing more from it (it reads the
// next chunk only once the current one is handled), so its TCP window fills and the sender itself slows
// down: nothing is dropped, and a client that stays within its share (a plugin answering 64 calls at a
// time, a device reporting its state) never waits at all.

/** Messages a client may have admitted per turn of the event loop before the rest wait for later turns. */
export const PUBLISHES_PER_TURN = 64;

interface Waiting {
  admitted: number;
  queue: (() => void)[];
}

export class PublishTurns {
  private readonly clients = new Map<object, Waiting>();
  private turnScheduled = false;

  constructor(private readonly perTurn: number = PUBLISHES_PER_TURN) {}

  /** Calls `proceed` now while the client has share left in this turn, else in a later turn, in order. */
  admit(client: object, proceed: () => void): void {
    let state = this.clients.get(client);
    if (!state) {
      state = { admitted: 0, queue: [] };
      this.clients.set(client, state);
    }
    this.scheduleTurn();
    if (state.queue.length === 0 && state.admitted < this.perTurn) {
      state.admitted++;
      proceed();
      return;
    }
    state.queue.push(proceed);
  }

  /** Messages waiting for a later turn, over all clients. */
  waiting(): number {
    let total = 0;
    for (const state of this.clients.values()) total += state.queue.length;
    return total;
  }

  private scheduleTurn(): void {
    if (this.turnScheduled) return;
    this.turnScheduled = true;
    setImmediate(this.nextTurn);
  }

  /**
   * Runs in the check phase. Releases up to a share of each client's waiting messages; whatever waits
   * still is released by an immediate scheduled from here, which Node runs only after the next poll for
   * I/O: other sockets, timers and HTTP requests get their turn in between.
   */
  private readonly nextTurn = (): void => {
    this.turnScheduled = false;
    const ready: (() => void)[] = [];
    for (const [client, state] of this.clients) {
      const released = state.queue.splice(0, this.perTurn);
      state.admitted = released.length;
      ready.push(...released);
      if (state.admitted === 0) this.clients.delete(client);
    }
    if (this.clients.size > 0) this.scheduleTurn();
    for (const proceed of ready) proceed();
  };
}

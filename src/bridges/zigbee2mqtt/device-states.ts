// The last state each Zigbee2MQTT device published, and callers waiting for its next one (a set waits
// for the echo of its keys, a get_state for the answer to its /get). Keyed by friendly name, the name
// Zigbee2MQTT publishes under; a rename moves the entry.
import type { JsonObject } from '../../protocol/types.js';

export interface StateSnapshot {
  state: JsonObject;
  /** When the last state message arrived (ms since the epoch). */
  received_at: number;
}

interface Waiter {
  /** The friendly name it waits on (changes when the device is renamed). */
  name: string;
  accept: (message: JsonObject) => boolean;
  resolve: (message: JsonObject | null) => void;
}

export class DeviceStates {
  private readonly states = new Map<string, StateSnapshot>();
  private readonly waiters = new Map<string, Set<Waiter>>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * Records a state message. Zigbee2MQTT sends the whole cached state by default and only the changed
   * keys with cache_state off, so a message is merged into what is known.
   */
  update(friendlyName: string, message: JsonObject): void {
    const previous = this.states.get(friendlyName)?.state ?? {};
    this.states.set(friendlyName, { state: { ...previous, ...message }, received_at: this.now() });
    const waiting = this.waiters.get(friendlyName);
    if (!waiting) return;
    for (const waiter of [...waiting]) {
      if (!waiter.accept(message)) continue;
      waiting.delete(waiter);
      waiter.resolve(message);
    }
    if (waiting.size === 0) this.waiters.delete(friendlyName);
  }

  get(friendlyName: string): StateSnapshot | undefined {
    return this.states.get(friendlyName);
  }

  /**
   * Resolves with the next state message of the device that `accept` takes, or null after timeoutMs or
   * when the signal aborts. Register before publishing the command: the answer may come at once.
   */
  waitForNext(friendlyName: string, accept: (message: JsonObject) => boolean, timeoutMs: number, signal?: AbortSignal): Promise<JsonObject | null> {
    return new Promise((resolve) => {
      if (signal?.aborted) {
        resolve(null);
        return;
      }
      const finish = (message: JsonObject | null): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const set = this.waiters.get(waiter.name);
        set?.delete(waiter);
        if (set?.size === 0) this.waiters.delete(waiter.name);
        resolve(message);
      };
      const waiter: Waiter = { name: friendlyName, accept, resolve: finish };
      const onAbort = (): void => finish(null);
      const timer = setTimeout(() => finish(null), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      let set = this.waiters.get(friendlyName);
      if (!set) {
        set = new Set();
        this.waiters.set(friendlyName, set);
      }
      set.add(waiter);
    });
  }

  /** A renamed device keeps its known state; callers waiting on the old name keep waiting on the new. */
  rename(from: string, to: string): void {
    const snapshot = this.states.get(from);
    if (snapshot) {
      this.states.delete(from);
      this.states.set(to, snapshot);
    }
    const waiting = this.waiters.get(from);
    if (waiting) {
      this.waiters.delete(from);
      const target = this.waiters.get(to) ?? new Set<Waiter>();
      for (const waiter of waiting) {
        waiter.name = to;
        target.add(waiter);
      }
      this.waiters.set(to, target);
    }
  }

  /** Forgets a device that left; whoever waits for it gets null at once. */
  forget(friendlyName: string): void {
    this.states.delete(friendlyName);
    const waiting = this.waiters.get(friendlyName);
    this.waiters.delete(friendlyName);
    for (const waiter of waiting ?? []) waiter.resolve(null);
  }

  /** Ends every wait (shutdown). */
  clear(): void {
    for (const name of [...this.waiters.keys()]) this.forget(name);
    this.states.clear();
  }
}

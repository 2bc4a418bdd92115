// Registrations waiting their turn, bounded. Each registration costs the Core normalising, validating,
// hashing, storing and indexing, so they are handled one per turn of the event loop; a client that sends
// them faster than that (a plugin re-registering in a loop, an attacker with a login) made the queue grow
// without end: 880,000 registrations and 500 MB in ten seconds, with every other plugin's registration
// waiting behind them for hours.
//
// The rules: a newer registration of the same plugin id from the same client replaces the one still
// waiting (only the newest descriptor matters, and it keeps the older one's place); one client may have at
// most PER_CLIENT waiting; all clients together at most TOTAL, and TOTAL_BYTES of payload. A registration
// over a limit is not queued; the client may send it again later.

/** Waiting registrations of one client (one connection); a plugin is one connection, a gateway a few hundred. */
export const MAX_WAITING_PER_CLIENT = 256;
/** Waiting registrations of all clients together: a whole house of plugins re-registering after a restart. */
export const MAX_WAITING_TOTAL = 10_000;
/** Payload bytes of all waiting registrations together. */
export const MAX_WAITING_BYTES = 64 * 1024 * 1024;

export interface WaitingRegistration {
  /** The client it came from; undefined through an external broker, which does not say. */
  client: string | undefined;
  /** The plugin id it names, when it could be read; undefined otherwise (never replaced). */
  pluginId: string | undefined;
  bytes: number;
}

/** limit: which one was reached; `client` is the sender's own doing, `total` may be everyone else's. */
export type QueueOutcome = { queued: true; replaced: boolean } | { queued: false; limit: 'client' | 'total'; reason: string };

export interface RegistrationQueueLimits {
  perClient: number;
  total: number;
  bytes: number;
}

interface Slot<T> {
  item: T;
  key: string | undefined;
}

export class RegistrationQueue<T extends WaitingRegistration> {
  private readonly items: Slot<T>[] = [];
  /** The waiting slot of each (client, plugin id), so a newer registration replaces it in O(1). */
  private readonly byKey = new Map<string, Slot<T>>();
  private readonly perClient = new Map<string, number>();
  private bytes = 0;
  private readonly limits: RegistrationQueueLimits;

  constructor(limits: Partial<RegistrationQueueLimits> = {}) {
    this.limits = { perClient: MAX_WAITING_PER_CLIENT, total: MAX_WAITING_TOTAL, bytes: MAX_WAITING_BYTES, ...limits };
  }

  get size(): number {
    return this.items.length;
  }

  push(item: T): QueueOutcome {
    const key = item.pluginId === undefined ? undefined : `${item.client ?? ''}\u0000${item.pluginId}`;
    const waiting = key === undefined ? undefined : this.byKey.get(key);
    if (waiting) {
      this.bytes += item.bytes - waiting.item.bytes;
      waiting.item = item;
      return { queued: true, replaced: true };
    }
    const { perClient, total, bytes } = this.limits;
    const fromClient = item.client === undefined ? 0 : (this.perClient.get(item.client) ?? 0);
    if (item.client !== undefined && fromClient >= perClient) {
      return {
        queued: false,
        limit: 'client',
        reason: `${perClient} registrations from this client are already waiting to be handled; send this one again once they are answered`,
      };
    }
    if (this.items.length >= total || this.bytes + item.bytes > bytes) {
      return {
        queued: false,
        limit: 'total',
        reason: `the Core has ${this.items.length} registrations waiting to be handled (the limit is ${total}, or ${bytes} bytes); send this one again later`,
      };
    }
    const slot = { item, key };
    this.items.push(slot);
    if (key !== undefined) this.byKey.set(key, slot);
    this.bytes += item.bytes;
    if (item.client !== undefined) this.perClient.set(item.client, fromClient + 1);
    return { queued: true, replaced: false };
  }

  shift(): T | undefined {
    const slot = this.items.shift();
    if (!slot) return undefined;
    const { item, key } = slot;
    if (key !== undefined) this.byKey.delete(key);
    this.bytes -= item.bytes;
    if (item.client !== undefined) {
      const left = (this.perClient.get(item.client) ?? 1) - 1;
      if (left > 0) this.perClient.set(item.client, left);
      else this.perClient.delete(item.client);
    }
    return item;
  }

  clear(): void {
    this.items.length = 0;
    this.byKey.clear();
    this.perClient.clear();
    this.bytes = 0;
  }
}

// Connections that have not sent their login (CONNECT) yet, bounded. Anyone who can reach the broker's port
// can open TCP connections and never send CONNECT; the broker closes each after its connect timeout, but
// without a bound one machine could hold thousands at once until the Core runs out of file descriptors
// (15,000 held here cost 15,000 descriptors and 275 MB). Once CONNECT arrives the login guard bounds the
// connection instead (password checks a few at a time, backoff per address), so it stops counting here.
//
// Over a limit the oldest waiting connection is closed, not the newest: a real client sends CONNECT within
// milliseconds of connecting, so it is never the oldest, while refusing newcomers would let anyone who
// holds the limit full (128 idle connections per address, 1,024 from a handful of addresses) keep every
// plugin out for as long as they care to.

/** Connections from one address waiting for their CONNECT: a plugin host connecting a fleet does it in waves below this. */
export const MAX_PENDING_PER_ADDRESS = 128;
/** Connections waiting for their CONNECT, from all addresses together. */
export const MAX_PENDING_TOTAL = 1024;

export interface PendingLimits {
  perAddress: number;
  total: number;
}

export interface Eviction<Connection> {
  connection: Connection;
  address: string;
  reason: string;
}

export class PendingConnections<Connection extends object> {
  /** In arrival order, so the first entry is the oldest waiting connection. */
  private readonly addressOf = new Map<Connection, string>();
  private readonly fromAddress = new Map<string, Set<Connection>>();
  private readonly limits: PendingLimits;

  constructor(limits: Partial<PendingLimits> = {}) {
    this.limits = { perAddress: MAX_PENDING_PER_ADDRESS, total: MAX_PENDING_TOTAL, ...limits };
  }

  /** Counts a new connection; returns the connection to close to make room for it, if any (no longer counted). */
  admit(connection: Connection, address: string): Eviction<Connection> | undefined {
    let eviction: Eviction<Connection> | undefined;
    const sameAddress = this.fromAddress.get(address);
    if (sameAddress && sameAddress.size >= this.limits.perAddress) {
      const oldest = first(sameAddress);
      eviction = { connection: oldest, address, reason: `${sameAddress.size} connections from ${address} have not sent their login yet` };
    } else if (this.addressOf.size >= this.limits.total) {
      const [oldest, oldestAddress] = first(this.addressOf.entries());
      eviction = { connection: oldest, address: oldestAddress, reason: `${this.addressOf.size} connections have not sent their login yet` };
    }
    if (eviction) this.settle(eviction.connection);
    this.addressOf.set(connection, address);
    const set = this.fromAddress.get(address) ?? new Set<Connection>();
    set.add(connection);
    this.fromAddress.set(address, set);
    return eviction;
  }

  /** The connection sent its login or closed: it no longer counts. */
  settle(connection: Connection): void {
    const address = this.addressOf.get(connection);
    if (address === undefined) return;
    this.addressOf.delete(connection);
    const set = this.fromAddress.get(address);
    set?.delete(connection);
    if (set?.size === 0) this.fromAddress.delete(address);
  }

  get size(): number {
    return this.addressOf.size;
  }
}

function first<T>(items: Iterable<T>): T {
  for (const item of items) return item;
  throw new Error('empty');
}

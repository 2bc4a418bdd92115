// Connections that have not logged in yet, bounded. Anyone who can reach the broker's port can open TCP
// connections and never send CONNECT; the broker closes each after its connect timeout, but without a bound
// one machine could hold thousands at once until the Core runs out of file descriptors (15,000 held here
// cost 15,000 descriptors and 275 MB). A connection counts until its client is accepted or it closes; one
// over a limit is closed at once.

/** Connections from one address not logged in yet: a plugin host connecting a fleet does it in waves below this. */
export const MAX_PENDING_PER_ADDRESS = 128;
/** Connections not logged in yet, from all addresses together. */
export const MAX_PENDING_TOTAL = 1024;

export interface PendingLimits {
  perAddress: number;
  total: number;
}

export class PendingConnections<Connection extends object> {
  private readonly addressOf = new Map<Connection, string>();
  private readonly perAddress = new Map<string, number>();
  private readonly limits: PendingLimits;

  constructor(limits: Partial<PendingLimits> = {}) {
    this.limits = { perAddress: MAX_PENDING_PER_ADDRESS, total: MAX_PENDING_TOTAL, ...limits };
  }

  /** Counts a new connection; undefined when it may wait for its login, else why it must be closed. */
  admit(connection: Connection, address: string): string | undefined {
    const fromAddress = this.perAddress.get(address) ?? 0;
    if (fromAddress >= this.limits.perAddress) return `${fromAddress} connections from ${address} have not logged in yet`;
    if (this.addressOf.size >= this.limits.total) return `${this.addressOf.size} connections have not logged in yet`;
    this.addressOf.set(connection, address);
    this.perAddress.set(address, fromAddress + 1);
    return undefined;
  }

  /** The connection logged in or closed: it no longer counts. */
  settle(connection: Connection): void {
    const address = this.addressOf.get(connection);
    if (address === undefined) return;
    this.addressOf.delete(connection);
    const left = (this.perAddress.get(address) ?? 1) - 1;
    if (left > 0) this.perAddress.set(address, left);
    else this.perAddress.delete(address);
  }

  get size(): number {
    return this.addressOf.size;
  }
}

// Connections held by each login, bounded. Every connection is a file descriptor and a client in the broker;
// without a bound one credential (a stolen device key, or a plugin reconnecting in a loop with fresh client
// ids) could take every descriptor the Core has. Anonymous clients are not counted: they exist only while
// every listener is on loopback.

/** Connections one login may hold at once: a host running many plugins under one credential stays below it. */
export const DEFAULT_MAX_CONNECTIONS_PER_LOGIN = 256;

export class LoginConnections<Connection extends object> {
  private readonly byLogin = new Map<string, Set<Connection>>();
  private readonly loginOf = new WeakMap<Connection, string>();

  constructor(private readonly max = DEFAULT_MAX_CONNECTIONS_PER_LOGIN) {}

  /**
   * Gives the login a place for this connection; false when it already holds its maximum. A connection
   * replacing one the login holds (the same client id reconnecting) always gets one: the old connection
   * gives its place back when it closes.
   */
  take(login: string, connection: Connection, replacesOwn: boolean): boolean {
    const held = this.byLogin.get(login) ?? new Set<Connection>();
    if (!replacesOwn && held.size >= this.max) return false;
    held.add(connection);
    this.byLogin.set(login, held);
    this.loginOf.set(connection, login);
    return true;
  }

  /** The connection closed. */
  release(connection: Connection): void {
    const login = this.loginOf.get(connection);
    if (login === undefined) return;
    this.loginOf.delete(connection);
    const held = this.byLogin.get(login);
    held?.delete(connection);
    if (held?.size === 0) this.byLogin.delete(login);
  }

  held(login: string): number {
    return this.byLogin.get(login)?.size ?? 0;
  }
}

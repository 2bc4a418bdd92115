// Which login each MQTT client id belongs to. MQTT lets a new connection with a known client id take
// over the old session: its stored subscriptions (clean session off) and the id itself, so that the
// rightful client is turned away while the newcomer stays. A client id therefore belongs to the first
// login that connects with it, in the database so that a restart opens no window, until that credential
// is removed. One exception: the SDK's id for a plugin (`homeclaw-plugin-<id>`) goes to whoever owns that
// plugin id, so nobody can hold it before the plugin first connects, and it follows a transferred plugin.
import type Database from 'better-sqlite3';
import { pluginIdOfSdkClientId } from '../protocol/ids.js';

/** How many client ids one login keeps; beyond that the least recently used is forgotten. */
export const MAX_CLIENT_IDS_PER_LOGIN = 100;

export interface ClientIdHolders {
  /** The login holding this client id, if any. */
  holderOf(clientId: string): string | undefined;
  /** Records that `login` connected with `clientId` now (a new claim, or a refreshed one). */
  claim(clientId: string, login: string): void;
  /** Forgets every client id of a login whose credential was removed. */
  releaseLogin(login: string): void;
}

export class ClientIdStore implements ClientIdHolders {
  constructor(
    private readonly db: Database.Database,
    private readonly maxPerLogin = MAX_CLIENT_IDS_PER_LOGIN,
    private readonly now: () => number = Date.now,
  ) {
    db.exec(`CREATE TABLE IF NOT EXISTS mqtt_client_ids (
      client_id TEXT PRIMARY KEY,
      login TEXT NOT NULL,
      last_seen INTEGER NOT NULL
    )`);
    db.exec('CREATE INDEX IF NOT EXISTS mqtt_client_ids_by_login ON mqtt_client_ids (login, last_seen)');
  }

  holderOf(clientId: string): string | undefined {
    const row = this.db.prepare('SELECT login FROM mqtt_client_ids WHERE client_id = ?').get(clientId) as { login: string } | undefined;
    return row?.login;
  }

  claim(clientId: string, login: string): void {
    const claimIt = this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO mqtt_client_ids (client_id, login, last_seen) VALUES (?, ?, ?)
           ON CONFLICT (client_id) DO UPDATE SET login = excluded.login, last_seen = excluded.last_seen`,
        )
        .run(clientId, login, this.now());
      // A login that cycles through random ids must not grow the table without bound.
      this.db
        .prepare(
          `DELETE FROM mqtt_client_ids WHERE login = ? AND client_id NOT IN
             (SELECT client_id FROM mqtt_client_ids WHERE login = ? ORDER BY last_seen DESC, rowid DESC LIMIT ?)`,
        )
        .run(login, login, this.maxPerLogin);
    });
    claimIt();
  }

  releaseLogin(login: string): void {
    this.db.prepare('DELETE FROM mqtt_client_ids WHERE login = ?').run(login);
  }
}

export type ClientIdDecision = { allowed: true } | { allowed: false; reason: string };

export interface ClientIdQuestion {
  clientId: string;
  /** The connecting login; undefined for an anonymous client. */
  login: string | undefined;
  /** The login recorded as holding the id. */
  holder: string | undefined;
  /** False once the holder's credential was removed. */
  holderExists: boolean;
  /** Whether a login owns a plugin id now (the registry's owner, else the credential's plugin ids). */
  ownsPlugin: (login: string, pluginId: string) => boolean;
}

/** May this login (or anonymous client) connect with this client id? */
export function mayUseClientId(question: ClientIdQuestion): ClientIdDecision {
  const { clientId, login, holder } = question;
  if (holder === undefined || holder === login || !question.holderExists) return { allowed: true };
  if (takesBackOwnSdkId(clientId, login, holder, question.ownsPlugin)) return { allowed: true };
  return { allowed: false, reason: `client id "${clientId}" belongs to login "${holder}"` };
}

/**
 * True when `login` owns the plugin whose SDK id this is and the holder (a login, or an anonymous client:
 * undefined) does not: the plugin's owner gets its id back, from a connected client too.
 */
export function takesBackOwnSdkId(
  clientId: string,
  login: string | undefined,
  holder: string | undefined,
  ownsPlugin: (login: string, pluginId: string) => boolean,
): boolean {
  const pluginId = pluginIdOfSdkClientId(clientId);
  if (login === undefined || pluginId === undefined || !ownsPlugin(login, pluginId)) return false;
  return holder === undefined || !ownsPlugin(holder, pluginId);
}

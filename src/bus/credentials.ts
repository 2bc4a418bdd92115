// Per-client MQTT credentials. Only a scrypt hash and its salt are stored: the generated password is
// shown once, at creation, and cannot be recovered from the database.
import { createHash, randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type Database from 'better-sqlite3';
import { explainBadUserId, isUserId } from '../access/user-id.js';
import { guardDiskFull } from '../kit/disk-full.js';
import { explainBadId, isChannelId, isPluginId, PLUGIN_ID_PATTERN } from '../protocol/ids.js';

/**
 * plugin: its own plugin topics; channel: its own channel topics; admin: everything; zigbee2mqtt: a
 * Zigbee2MQTT installation, only under zigbee2mqtt.base_topic.
 */
export const CREDENTIAL_ROLES = ['plugin', 'channel', 'admin', 'zigbee2mqtt', 'caller'] as const;
export type CredentialRole = (typeof CREDENTIAL_ROLES)[number];

export interface CredentialOptions {
  /** Plugin ids this credential may act for; default [name]. */
  plugin_ids?: string[];
  /** Channels this credential may act for; default [name]. */
  channels?: string[];
  /** Users a channel credential may speak as, or a caller credential may call for ("*": anyone); default [name]. */
  users?: string[];
}

/** What changed about a credential, for caches and live sessions that depend on it. */
export type CredentialChange = 'added' | 'removed' | 'rotated';

/** A credential without its secret: what list() returns and what verify() yields on success. */
export interface CredentialInfo {
  name: string;
  role: CredentialRole;
  plugin_ids: string[];
  channels: string[];
  /** Channel and caller credentials: the users it may act as ("*" = anyone). */
  users?: string[];
  created_at: number;
}

export interface NewCredential {
  name: string;
  /** Shown once; only its hash is stored. */
  password: string;
}

/** What the broker needs to authenticate a client. */
export interface CredentialVerifier {
  verify(name: string, password: string): Promise<CredentialInfo | null>;
  /**
   * A digest of the stored secret, which changes whenever the password does (remove, rotate, re-add):
   * lets a login cache tell that a verified password still stands. undefined for an unknown name.
   */
  fingerprint?(name: string): string | undefined;
  /** The credential as stored now, without its secret. */
  get?(name: string): CredentialInfo | undefined;
}

interface CredentialRow {
  name: string;
  role: string;
  salt: Buffer;
  hash: Buffer;
  kdf: string;
  plugin_ids: string;
  channels: string;
  users: string | null;
  created_at: number;
}

// The passwords are 192-bit random secrets, so the KDF cost protects against nothing a brute force could
// reach anyway; N=2^14 keeps a verify near 30 ms on a small device while still being a proper slow hash.
const KDF = { N: 16384, r: 8, p: 1, keyLength: 32 } as const;
const KDF_LABEL = `scrypt:${KDF.N}:${KDF.r}:${KDF.p}:${KDF.keyLength}`;
const SALT_BYTES = 16;
const PASSWORD_BYTES = 24;

function scrypt(password: string, salt: Buffer, keyLength: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scryptCallback(password, salt, keyLength, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

async function hashPassword(password: string): Promise<{ salt: Buffer; hash: Buffer }> {
  const salt = randomBytes(SALT_BYTES);
  return { salt, hash: await scrypt(password, salt, KDF.keyLength, { N: KDF.N, r: KDF.r, p: KDF.p }) };
}

function parseKdf(label: string): { N: number; r: number; p: number; keyLength: number } | null {
  const match = /^scrypt:(\d+):(\d+):(\d+):(\d+)$/.exec(label);
  if (!match) return null;
  return { N: Number(match[1]), r: Number(match[2]), p: Number(match[3]), keyLength: Number(match[4]) };
}

function isRole(value: unknown): value is CredentialRole {
  return typeof value === 'string' && (CREDENTIAL_ROLES as readonly string[]).includes(value);
}

/** Channel and caller credentials act for people; they are bound to the users they may act as. */
function hasUsers(role: string): boolean {
  return role === 'channel' || role === 'caller';
}

function parseIdList(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}

export class CredentialStore implements CredentialVerifier {
  private readonly listeners = new Set<(name: string, change: CredentialChange) => void>();

  constructor(private readonly db: Database.Database) {
    db.exec(`CREATE TABLE IF NOT EXISTS mqtt_credentials (
      name TEXT PRIMARY KEY,
      role TEXT NOT NULL,
      salt BLOB NOT NULL,
      hash BLOB NOT NULL,
      kdf TEXT NOT NULL,
      plugin_ids TEXT NOT NULL,
      channels TEXT NOT NULL,
      created_at INTEGER NOT NULL
    )`);
    // Databases from before channel user bindings: NULL means the default binding [name].
    const columns = db.prepare('PRAGMA table_info(mqtt_credentials)').all() as { name: string }[];
    if (!columns.some((column) => column.name === 'users')) db.exec('ALTER TABLE mqtt_credentials ADD COLUMN users TEXT');
  }

  /** Called after a credential is added, removed or given a new password. */
  onChanged(listener: (name: string, change: CredentialChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(name: string, change: CredentialChange): void {
    for (const listener of this.listeners) listener(name, change);
  }

  /** Creates a credential; throws an Error with a clear message on a bad name, role, id or a duplicate. */
  async add(name: string, role: CredentialRole, options: CredentialOptions = {}): Promise<NewCredential> {
    if (!PLUGIN_ID_PATTERN.test(name)) throw new Error(explainBadId(name, 'credential name'));
    if (!isRole(role)) throw new Error(`role must be one of ${CREDENTIAL_ROLES.join(', ')}; got ${String(role)}`);
    const pluginIds = options.plugin_ids ?? [name];
    const channels = options.channels ?? [name];
    for (const id of pluginIds) if (!isPluginId(id)) throw new Error(explainBadId(id, 'plugin id'));
    for (const channel of channels) if (!isChannelId(channel)) throw new Error(explainBadId(channel, 'channel'));
    if (options.users !== undefined && !hasUsers(role)) {
      throw new Error(`users binds a channel or caller credential to the people it may act as; a ${role} credential cannot have users`);
    }
    const users = hasUsers(role) ? (options.users ?? [name]) : null;
    if (users?.length === 0) throw new Error('users must name at least one user ("*" for anyone)');
    for (const user of users ?? []) if (user !== '*' && !isUserId(user)) throw new Error(explainBadUserId(user));
    if (this.row(name)) throw new Error(`credential "${name}" already exists; remove it first or rotate its password`);

    const password = randomBytes(PASSWORD_BYTES).toString('base64url');
    const { salt, hash } = await hashPassword(password);
    try {
      guardDiskFull(`storing credential ${name}`, () =>
        this.db
          .prepare(
            `INSERT INTO mqtt_credentials (name, role, salt, hash, kdf, plugin_ids, channels, users, created_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(name, role, salt, hash, KDF_LABEL, JSON.stringify(pluginIds), JSON.stringify(channels), users ? JSON.stringify(users) : null, Date.now()),
      );
    } catch (error) {
      if ((error as { code?: string }).code === 'DISK_FULL') throw error;
      // A concurrent add of the same name lost the race between the check and the insert.
      throw new Error(`credential "${name}" could not be stored: ${(error as Error).message}`);
    }
    this.changed(name, 'added');
    return { name, password };
  }

  /** A new password for an existing credential (shown once); the old one stops working at once. */
  async rotate(name: string): Promise<NewCredential | undefined> {
    if (!this.row(name)) return undefined;
    const password = randomBytes(PASSWORD_BYTES).toString('base64url');
    const { salt, hash } = await hashPassword(password);
    const result = guardDiskFull(`rotating credential ${name}`, () =>
      this.db.prepare('UPDATE mqtt_credentials SET salt = ?, hash = ?, kdf = ? WHERE name = ?').run(salt, hash, KDF_LABEL, name),
    );
    if (result.changes === 0) return undefined; // removed meanwhile
    this.changed(name, 'rotated');
    return { name, password };
  }

  /** Resolves to the credential when the password matches, null otherwise (also for unknown names). */
  async verify(name: string, password: string): Promise<CredentialInfo | null> {
    const row = typeof name === 'string' ? this.row(name) : undefined;
    const kdf = row ? parseKdf(row.kdf) : null;
    // An unknown name still costs one hash, so response time does not reveal which names exist.
    const salt = row?.salt ?? randomBytes(SALT_BYTES);
    const params = kdf ?? KDF;
    const expected = row?.hash ?? Buffer.alloc(params.keyLength);
    let actual: Buffer;
    try {
      actual = await scrypt(String(password), salt, params.keyLength, { N: params.N, r: params.r, p: params.p });
    } catch {
      return null;
    }
    const matches = actual.length === expected.length && timingSafeEqual(actual, expected);
    if (!row || !kdf || !matches || !isRole(row.role)) return null;
    return this.info(row);
  }

  fingerprint(name: string): string | undefined {
    const row = this.row(name);
    return row ? createHash('sha256').update(row.kdf).update(row.salt).update(row.hash).digest('base64') : undefined;
  }

  remove(name: string): boolean {
    const removed = guardDiskFull(`removing credential ${name}`, () => this.db.prepare('DELETE FROM mqtt_credentials WHERE name = ?').run(name)).changes > 0;
    if (removed) this.changed(name, 'removed');
    return removed;
  }

  /** Users the channel credentials acting for this channel may speak as (external broker bindings). */
  usersOfChannel(channel: string): string[] {
    return this.channelUsers(channel, () => []);
  }

  /** Users the channel credentials of this channel speak for, a credential without --users for its own name. */
  boundUsersOfChannel(channel: string): string[] {
    return this.channelUsers(channel, (credential) => [credential.name]);
  }

  /** The users of the channel credentials acting for a channel; `unset` answers for one without --users. */
  private channelUsers(channel: string, unset: (credential: CredentialInfo) => string[]): string[] {
    const users = new Set<string>();
    for (const credential of this.list()) {
      if (credential.role === 'channel' && credential.channels.includes(channel)) for (const user of credential.users ?? unset(credential)) users.add(user);
    }
    return [...users];
  }

  get(name: string): CredentialInfo | undefined {
    const row = this.row(name);
    return row && isRole(row.role) ? this.info(row) : undefined;
  }

  list(): CredentialInfo[] {
    const rows = this.db.prepare('SELECT * FROM mqtt_credentials ORDER BY name').all() as CredentialRow[];
    // Rows with a role this version does not know (edited by hand) can never log in, so they are not listed.
    return rows.filter((row) => isRole(row.role)).map((row) => this.info(row));
  }

  private row(name: string): CredentialRow | undefined {
    return this.db.prepare('SELECT * FROM mqtt_credentials WHERE name = ?').get(name) as CredentialRow | undefined;
  }

  private info(row: CredentialRow): CredentialInfo {
    return {
      name: row.name,
      role: row.role as CredentialRole,
      plugin_ids: parseIdList(row.plugin_ids),
      channels: parseIdList(row.channels),
      // NULL (a channel credential from before user bindings, or any caller from before them): the name.
      ...(hasUsers(row.role) ? { users: row.users === null ? [row.name] : parseIdList(row.users) } : {}),
      created_at: row.created_at,
    };
  }
}

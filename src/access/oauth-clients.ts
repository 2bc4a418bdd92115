// OAuth clients of the Core's authorization server (Home Assistant's MCP client, the MCP Inspector...):
// added by the admin (`homeclaw oauth clients add`) or, when oauth.dynamic_registration is on, by the
// client itself (RFC 7591). A confidential client's secret is shown once; only its SHA-256 is stored (it
// is 256 random bits, so a slow hash would protect nothing more). A public client (token endpoint auth
// "none", dynamic registration only) has no secret and relies on PKCE alone.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type Database from 'better-sqlite3';
import { guardDiskFull } from '../kit/disk-full.js';
import { tokenDigest } from './user-tokens.js';

export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;
export type ClientAuthMethod = (typeof CLIENT_AUTH_METHODS)[number];

export interface OAuthClient {
  client_id: string;
  name: string;
  redirect_uris: string[];
  /** What the client registered; a confidential client may use either secret method. */
  auth_method: ClientAuthMethod;
  /** cli: added by the admin; dynamic: registered itself (RFC 7591). */
  source: 'cli' | 'dynamic';
  created_at: number;
  last_used_at: number | null;
}

export interface NewClient {
  client: OAuthClient;
  /** Shown once; absent for public clients. */
  client_secret?: string;
}

/** A user-facing failure: bad input (400), a duplicate (409), an unknown client (404). */
export class OAuthClientError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 404 | 409,
  ) {
    super(message);
  }
}

interface Row {
  client_id: string;
  name: string;
  secret_sha256: string | null;
  redirect_uris: string;
  auth_method: string;
  source: string;
  created_at: number;
  last_used_at: number | null;
}

const CLI_NAME = /^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$/;
const MAX_REDIRECT_URIS = 10;
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Why a redirect URI cannot be registered, or undefined when it can: an absolute http(s) URL, or a
 * native app's private-use scheme (reverse domain name, RFC 8252 §7.1); never a fragment or credentials.
 * Plain http is allowed because Home Assistant's own callback on a LAN is often http.
 */
export function redirectUriProblem(uri: string): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `"${uri}" is not an absolute URL`;
  }
  if (url.hash !== '' || uri.includes('#')) return `"${uri}" must not have a fragment (#...)`;
  if (url.username !== '' || url.password !== '') return `"${uri}" must not carry credentials`;
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.hostname === '' ? `"${uri}" has no host` : undefined;
  if (/^[a-z][a-z0-9+-]*\.[a-z0-9+.-]+:$/.test(url.protocol)) return undefined;
  return `"${uri}" must be an http(s) URL or a reverse-domain app scheme (com.example.app:/callback)`;
}

function parseList(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  } catch {
    return [];
  }
}

function isAuthMethod(value: string): value is ClientAuthMethod {
  return (CLIENT_AUTH_METHODS as readonly string[]).includes(value);
}

export class OAuthClientStore {
  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number = Date.now,
  ) {
    db.exec(`CREATE TABLE IF NOT EXISTS oauth_clients (
      client_id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      secret_sha256 TEXT,
      redirect_uris TEXT NOT NULL,
      auth_method TEXT NOT NULL,
      source TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER
    )`);
  }

  add(input: { name: unknown; redirect_uris: unknown; auth_method?: ClientAuthMethod; source: 'cli' | 'dynamic' }): NewClient {
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (input.source === 'cli' && !CLI_NAME.test(name)) {
      throw new OAuthClientError(
        `client name must be 1 to 64 letters, digits, spaces, _ . or -, starting with a letter or digit (got ${JSON.stringify(input.name)})`,
        400,
      );
    }
    if (input.source === 'cli' && this.list().some((client) => client.name === name)) {
      throw new OAuthClientError(`a client named "${name}" already exists; remove it first (homeclaw oauth clients remove "${name}")`, 409);
    }
    const uris = input.redirect_uris;
    if (!Array.isArray(uris) || uris.length === 0 || uris.some((uri) => typeof uri !== 'string')) {
      throw new OAuthClientError('at least one redirect URI is required (--redirect-uri <uri>)', 400);
    }
    if (uris.length > MAX_REDIRECT_URIS) throw new OAuthClientError(`at most ${MAX_REDIRECT_URIS} redirect URIs`, 400);
    for (const uri of uris as string[]) {
      const problem = redirectUriProblem(uri);
      if (problem) throw new OAuthClientError(`redirect URI ${problem}`, 400);
    }
    const authMethod = input.auth_method ?? 'client_secret_basic';
    const client_id = `hcc_${randomBytes(16).toString('base64url')}`;
    const secret = authMethod === 'none' ? undefined : `hcs_${randomBytes(32).toString('base64url')}`;
    const created_at = this.now();
    const stored = (name || 'unnamed client').slice(0, 100);
    guardDiskFull(`storing OAuth client ${stored}`, () =>
      this.db
        .prepare('INSERT INTO oauth_clients (client_id, name, secret_sha256, redirect_uris, auth_method, source, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(client_id, stored, secret ? tokenDigest(secret) : null, JSON.stringify(uris), authMethod, input.source, created_at),
    );
    const client: OAuthClient = {
      client_id,
      name: stored,
      redirect_uris: [...(uris as string[])],
      auth_method: authMethod,
      source: input.source,
      created_at,
      last_used_at: null,
    };
    return secret ? { client, client_secret: secret } : { client };
  }

  get(clientId: string): OAuthClient | undefined {
    const row = this.db.prepare('SELECT * FROM oauth_clients WHERE client_id = ?').get(clientId) as Row | undefined;
    return row ? this.info(row) : undefined;
  }

  /** A client by id, or by name when exactly one client has that name. */
  resolve(idOrName: string): OAuthClient {
    const byId = this.get(idOrName);
    if (byId) return byId;
    const named = this.list().filter((client) => client.name === idOrName);
    if (named.length === 1) return named[0] as OAuthClient;
    if (named.length > 1)
      throw new OAuthClientError(`${named.length} clients are named "${idOrName}"; use the client id (${named.map((c) => c.client_id).join(', ')})`, 409);
    throw new OAuthClientError(`no OAuth client "${idOrName}" (homeclaw oauth clients list)`, 404);
  }

  list(): OAuthClient[] {
    return (this.db.prepare('SELECT * FROM oauth_clients ORDER BY created_at, client_id').all() as Row[]).map((row) => this.info(row));
  }

  countDynamic(): number {
    return (this.db.prepare("SELECT COUNT(*) AS n FROM oauth_clients WHERE source = 'dynamic'").get() as { n: number }).n;
  }

  remove(idOrName: string): OAuthClient {
    const client = this.resolve(idOrName);
    guardDiskFull(`removing OAuth client ${client.client_id}`, () => this.db.prepare('DELETE FROM oauth_clients WHERE client_id = ?').run(client.client_id));
    return client;
  }

  /**
   * The client when the presented secret is its own (constant-time on the digests), or a public client
   * presenting none; undefined otherwise. Never throws.
   */
  authenticate(clientId: string, secret: string | undefined): OAuthClient | undefined {
    const row = this.db.prepare('SELECT * FROM oauth_clients WHERE client_id = ?').get(clientId) as Row | undefined;
    if (!row) return undefined;
    if (row.secret_sha256 === null) {
      if (secret !== undefined) return undefined;
    } else {
      if (secret === undefined) return undefined;
      const given = Buffer.from(tokenDigest(secret), 'hex');
      const expected = Buffer.from(row.secret_sha256, 'hex');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    }
    const now = this.now();
    if (row.last_used_at === null || now - row.last_used_at > LAST_USED_RESOLUTION_MS) {
      try {
        this.db.prepare('UPDATE oauth_clients SET last_used_at = ? WHERE client_id = ?').run(now, clientId);
      } catch {
        // Only bookkeeping: a full disk must not lock clients out.
      }
    }
    return this.info(row);
  }

  private info(row: Row): OAuthClient {
    return {
      client_id: row.client_id,
      name: row.name,
      redirect_uris: parseList(row.redirect_uris),
      auth_method: isAuthMethod(row.auth_method) ? row.auth_method : 'client_secret_basic',
      source: row.source === 'dynamic' ? 'dynamic' : 'cli',
      created_at: row.created_at,
      last_used_at: row.last_used_at,
    };
  }
}

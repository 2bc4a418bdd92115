// OAuth grants and their tokens. A grant is what one consent created: a client may act as a principal
// (the admin, or a user under that user's policy) on the resource /mcp. From it come one authorization
// code, then access tokens (short-lived) and refresh tokens (replaced at every use). Codes and tokens are
// random (crypto.randomBytes) and stored only as SHA-256 digests.
//
// Rules that end a whole grant (every token issued from it), because each means a token was stolen:
// - a code presented a second time, or with a wrong PKCE verifier;
// - a refresh token presented after it was replaced (rotation reuse), or by another client;
// - the credential that approved the consent no longer being valid: a grant lives only as long as the
//   token typed into the consent page (rotating or removing that user token, or changing the admin
//   token, ends it);
// - revocation (RFC 7009 endpoint, `homeclaw oauth tokens revoke`, removing the client).
import { randomBytes, randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import { InvalidGrantError, InvalidScopeError, type OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { verifyChallenge } from 'pkce-challenge';
import { guardDiskFull } from '../kit/disk-full.js';
import type { Principal } from './principal.js';
import { tokenDigest } from './user-tokens.js';

export const OAUTH_SCOPE = 'mcp';

/** Who typed a token into the consent page; the grant lives as long as that token stays valid. */
export type Approver = { kind: 'admin' } | { kind: 'user'; user_id: string };

export interface GrantSettings {
  access_token_ttl_sec: number;
  refresh_token_ttl_sec: number;
  code_ttl_sec: number;
}

export interface GrantDeps {
  db: Database.Database;
  settings: GrantSettings;
  /** True while the token with this digest is still the approver's valid token. */
  approverValid(approver: Approver, digest: string): boolean;
  now?: () => number;
}

export interface NewCode {
  client_id: string;
  principal: Principal;
  approver: Approver;
  /** SHA-256 of the token typed into the consent page. */
  approver_digest: string;
  redirect_uri: string;
  /** The authorization request named the redirect URI, so the token request must repeat it. */
  redirect_uri_given: boolean;
  code_challenge: string;
  resource: string;
}

export interface IssuedTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export interface AccessCheck {
  principal: Principal;
  client_id: string;
  grant_id: string;
}

export interface GrantInfo {
  grant_id: string;
  client_id: string;
  acts_as: Principal;
  approved_by: Approver;
  scope: string;
  created_at: number;
  last_used_at: number | null;
  /** When the current refresh token expires (the grant ends then unless refreshed). */
  expires_at: number | null;
}

/** A refusal the token endpoint answers with, plus whether the grant was ended because of it. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: OAuthError; revoked?: string };

interface GrantRow {
  grant_id: string;
  client_id: string;
  principal_kind: string;
  user_id: string | null;
  approver_kind: string;
  approver_user: string | null;
  approver_sha256: string;
  scope: string;
  resource: string;
  created_at: number;
  last_used_at: number | null;
}

interface TokenRow {
  token_sha256: string;
  grant_id: string;
  kind: 'code' | 'access' | 'refresh';
  expires_at: number;
  used_at: number | null;
  redirect_uri: string | null;
  redirect_uri_given: number | null;
  code_challenge: string | null;
}

const PREFIX = { code: 'hcoc_', access: 'hcoa_', refresh: 'hcor_' } as const;
const PRUNE_INTERVAL_MS = 60_000;
const LAST_USED_RESOLUTION_MS = 60_000;

function newSecret(kind: keyof typeof PREFIX): string {
  return `${PREFIX[kind]}${randomBytes(32).toString('base64url')}`;
}

function principalOfRow(row: GrantRow): Principal {
  return row.principal_kind === 'user' && row.user_id ? { kind: 'user', user_id: row.user_id } : { kind: 'admin' };
}

function approverOfRow(row: GrantRow): Approver {
  return row.approver_kind === 'user' && row.approver_user ? { kind: 'user', user_id: row.approver_user } : { kind: 'admin' };
}

export class OAuthGrantStore {
  private readonly now: () => number;
  private lastPrune = 0;

  constructor(private readonly deps: GrantDeps) {
    this.now = deps.now ?? Date.now;
    deps.db.exec(`CREATE TABLE IF NOT EXISTS oauth_grants (
      grant_id TEXT PRIMARY KEY,
      client_id TEXT NOT NULL,
      principal_kind TEXT NOT NULL,
      user_id TEXT,
      approver_kind TEXT NOT NULL,
      approver_user TEXT,
      approver_sha256 TEXT NOT NULL,
      scope TEXT NOT NULL,
      resource TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER
    );
    CREATE TABLE IF NOT EXISTS oauth_tokens (
      token_sha256 TEXT PRIMARY KEY,
      grant_id TEXT NOT NULL,
      kind TEXT NOT NULL,
      expires_at INTEGER NOT NULL,
      used_at INTEGER,
      redirect_uri TEXT,
      redirect_uri_given INTEGER,
      code_challenge TEXT
    );
    CREATE INDEX IF NOT EXISTS oauth_tokens_grant ON oauth_tokens (grant_id)`);
  }

  private get db(): Database.Database {
    return this.deps.db;
  }

  /** The code the consent page redirects with; its grant exists from now on. */
  createCode(input: NewCode): string {
    const code = newSecret('code');
    const now = this.now();
    const grant_id = randomUUID();
    const user = input.principal.kind === 'user' ? input.principal.user_id : null;
    const approverUser = input.approver.kind === 'user' ? input.approver.user_id : null;
    guardDiskFull('storing an OAuth authorization code', () =>
      this.db.transaction(() => {
        this.db
          .prepare(
            'INSERT INTO oauth_grants (grant_id, client_id, principal_kind, user_id, approver_kind, approver_user, approver_sha256, scope, resource, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
          )
          .run(
            grant_id,
            input.client_id,
            input.principal.kind,
            user,
            input.approver.kind,
            approverUser,
            input.approver_digest,
            OAUTH_SCOPE,
            input.resource,
            now,
          );
        this.db
          .prepare(
            'INSERT INTO oauth_tokens (token_sha256, grant_id, kind, expires_at, redirect_uri, redirect_uri_given, code_challenge) VALUES (?, ?, ?, ?, ?, ?, ?)',
          )
          .run(
            tokenDigest(code),
            grant_id,
            'code',
            now + this.deps.settings.code_ttl_sec * 1000,
            input.redirect_uri,
            input.redirect_uri_given ? 1 : 0,
            input.code_challenge,
          );
      })(),
    );
    this.prune(now);
    return code;
  }

  /** The authorization code grant: single use, bound to its client, redirect URI and PKCE challenge. */
  async exchangeCode(clientId: string, code: string, verifier: string, redirectUri: string | undefined): Promise<Outcome<IssuedTokens>> {
    const found = this.token(code, 'code');
    if (!found) return { ok: false, error: new InvalidGrantError('unknown, expired or revoked authorization code') };
    const { token, grant } = found;
    if (grant.client_id !== clientId) return { ok: false, error: new InvalidGrantError('the authorization code was issued to another client') };
    // Consumed before anything else is checked: whatever happens next, this code never works again.
    const consumed =
      this.db.prepare('UPDATE oauth_tokens SET used_at = ? WHERE token_sha256 = ? AND used_at IS NULL').run(this.now(), token.token_sha256).changes === 1;
    if (!consumed) {
      this.revokeGrant(grant.grant_id);
      return {
        ok: false,
        error: new InvalidGrantError('the authorization code was already used; the tokens issued from it are revoked'),
        revoked: grant.grant_id,
      };
    }
    if (token.expires_at <= this.now()) return { ok: false, error: new InvalidGrantError('the authorization code expired; authorize again') };
    if (token.redirect_uri_given === 1 ? redirectUri !== token.redirect_uri : redirectUri !== undefined && redirectUri !== token.redirect_uri) {
      return { ok: false, error: new InvalidGrantError('redirect_uri does not match the one of the authorization request') };
    }
    if (!(await verifyChallenge(verifier, token.code_challenge ?? ''))) {
      this.revokeGrant(grant.grant_id);
      return { ok: false, error: new InvalidGrantError('code_verifier does not match the code_challenge (PKCE)'), revoked: grant.grant_id };
    }
    if (!this.deps.approverValid(approverOfRow(grant), grant.approver_sha256)) {
      this.revokeGrant(grant.grant_id);
      return { ok: false, error: new InvalidGrantError('the token that approved this grant is no longer valid'), revoked: grant.grant_id };
    }
    return { ok: true, value: this.issue(grant.grant_id) };
  }

  /** The refresh token grant: the presented token is replaced; presenting a replaced one ends the grant. */
  refresh(clientId: string, refreshToken: string, scope: string | undefined): Outcome<IssuedTokens> {
    const found = this.token(refreshToken, 'refresh');
    if (!found) return { ok: false, error: new InvalidGrantError('unknown, expired or revoked refresh token') };
    const { token, grant } = found;
    const end = (why: string): Outcome<IssuedTokens> => {
      this.revokeGrant(grant.grant_id);
      return { ok: false, error: new InvalidGrantError(why), revoked: grant.grant_id };
    };
    if (grant.client_id !== clientId) return end('the refresh token was issued to another client; the grant is revoked');
    if (token.used_at !== null) return end('the refresh token was already used (it is replaced at every refresh); the grant is revoked');
    if (token.expires_at <= this.now()) return { ok: false, error: new InvalidGrantError('the refresh token expired; authorize again') };
    if (!this.deps.approverValid(approverOfRow(grant), grant.approver_sha256)) return end('the token that approved this grant is no longer valid');
    if (scope?.split(' ').some((item) => item !== '' && item !== grant.scope)) {
      return { ok: false, error: new InvalidScopeError(`only the scope "${grant.scope}" was granted`) };
    }
    const replaced =
      this.db.prepare('UPDATE oauth_tokens SET used_at = ? WHERE token_sha256 = ? AND used_at IS NULL').run(this.now(), token.token_sha256).changes === 1;
    if (!replaced) return end('the refresh token was already used (it is replaced at every refresh); the grant is revoked');
    return { ok: true, value: this.issue(grant.grant_id) };
  }

  /** Who a valid access token acts as; undefined for anything else (unknown, expired, revoked). */
  verifyAccess(accessToken: string): AccessCheck | undefined {
    if (!accessToken.startsWith(PREFIX.access)) return undefined;
    const found = this.token(accessToken, 'access');
    if (!found) return undefined;
    const { token, grant } = found;
    const now = this.now();
    if (token.expires_at <= now) return undefined;
    if (!this.deps.approverValid(approverOfRow(grant), grant.approver_sha256)) return undefined;
    if (grant.last_used_at === null || now - grant.last_used_at > LAST_USED_RESOLUTION_MS) {
      try {
        this.db.prepare('UPDATE oauth_grants SET last_used_at = ? WHERE grant_id = ?').run(now, grant.grant_id);
      } catch {
        // Only bookkeeping: a full disk must not lock clients out.
      }
    }
    return { principal: principalOfRow(grant), client_id: grant.client_id, grant_id: grant.grant_id };
  }

  /** RFC 7009: the grant of an access or refresh token ends. Unknown tokens: 'unknown' (not an error). */
  revokeToken(clientId: string, presented: string): 'revoked' | 'unknown' | 'other-client' {
    const found = this.token(presented, 'access') ?? this.token(presented, 'refresh');
    if (!found) return 'unknown';
    if (found.grant.client_id !== clientId) return 'other-client';
    this.revokeGrant(found.grant.grant_id);
    return 'revoked';
  }

  /** Ends the matching grants; returns how many. */
  revoke(filter: { client_id?: string; user_id?: string; all?: boolean }): number {
    const grants = this.list().filter(
      (grant) =>
        filter.all === true ||
        ((filter.client_id === undefined || grant.client_id === filter.client_id) &&
          (filter.user_id === undefined || (grant.acts_as.kind === 'user' && grant.acts_as.user_id === filter.user_id)) &&
          (filter.client_id !== undefined || filter.user_id !== undefined)),
    );
    for (const grant of grants) this.revokeGrant(grant.grant_id);
    return grants.length;
  }

  list(): GrantInfo[] {
    const rows = this.db.prepare('SELECT * FROM oauth_grants ORDER BY created_at').all() as GrantRow[];
    const refreshExpiry = this.db.prepare("SELECT MAX(expires_at) AS at FROM oauth_tokens WHERE grant_id = ? AND kind = 'refresh' AND used_at IS NULL");
    return rows.map((row) => ({
      grant_id: row.grant_id,
      client_id: row.client_id,
      acts_as: principalOfRow(row),
      approved_by: approverOfRow(row),
      scope: row.scope,
      created_at: row.created_at,
      last_used_at: row.last_used_at,
      expires_at: (refreshExpiry.get(row.grant_id) as { at: number | null }).at,
    }));
  }

  revokeGrant(grantId: string): void {
    guardDiskFull('revoking an OAuth grant', () =>
      this.db.transaction(() => {
        this.db.prepare('DELETE FROM oauth_tokens WHERE grant_id = ?').run(grantId);
        this.db.prepare('DELETE FROM oauth_grants WHERE grant_id = ?').run(grantId);
      })(),
    );
  }

  private token(secret: string, kind: TokenRow['kind']): { token: TokenRow; grant: GrantRow } | undefined {
    if (!secret.startsWith(PREFIX[kind])) return undefined;
    const token = this.db.prepare('SELECT * FROM oauth_tokens WHERE token_sha256 = ? AND kind = ?').get(tokenDigest(secret), kind) as TokenRow | undefined;
    if (!token) return undefined;
    const grant = this.db.prepare('SELECT * FROM oauth_grants WHERE grant_id = ?').get(token.grant_id) as GrantRow | undefined;
    return grant ? { token, grant } : undefined;
  }

  private issue(grantId: string): IssuedTokens {
    const now = this.now();
    const access = newSecret('access');
    const refresh = newSecret('refresh');
    const { access_token_ttl_sec, refresh_token_ttl_sec } = this.deps.settings;
    guardDiskFull('issuing OAuth tokens', () =>
      this.db.transaction(() => {
        const insert = this.db.prepare('INSERT INTO oauth_tokens (token_sha256, grant_id, kind, expires_at) VALUES (?, ?, ?, ?)');
        insert.run(tokenDigest(access), grantId, 'access', now + access_token_ttl_sec * 1000);
        insert.run(tokenDigest(refresh), grantId, 'refresh', now + refresh_token_ttl_sec * 1000);
      })(),
    );
    this.prune(now);
    return { access_token: access, token_type: 'Bearer', expires_in: access_token_ttl_sec, refresh_token: refresh, scope: OAUTH_SCOPE };
  }

  /** Expired codes and tokens go; so do grants left without any token once their code has expired. */
  private prune(now: number): void {
    if (now - this.lastPrune < PRUNE_INTERVAL_MS) return;
    this.lastPrune = now;
    try {
      this.db.prepare('DELETE FROM oauth_tokens WHERE expires_at <= ?').run(now);
      this.db
        .prepare('DELETE FROM oauth_grants WHERE created_at <= ? AND NOT EXISTS (SELECT 1 FROM oauth_tokens t WHERE t.grant_id = oauth_grants.grant_id)')
        .run(now - this.deps.settings.code_ttl_sec * 1000);
    } catch {
      // Housekeeping only; the next issue tries again.
    }
  }
}

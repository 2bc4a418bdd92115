// OAuth 2.1 for /mcp, beside the admin and user bearer tokens: the stores, the public endpoints (metadata,
// consent page, token, revocation, registration), the admin routes, OAuth access tokens accepted on /mcp
// only (the resource they were issued for), and the 401 of /mcp that points clients to the metadata.
import { createHash, timingSafeEqual } from 'node:crypto';
import type Database from 'better-sqlite3';
import { AttemptLimiter } from '../../access/attempt-limiter.js';
import { OAuthClientStore } from '../../access/oauth-clients.js';
import { OAuthGrantStore, type Approver } from '../../access/oauth-grants.js';
import { tokenDigest, type UserTokenStore } from '../../access/user-tokens.js';
import type { OAuthConfig } from '../../config/types.js';
import type { Logger } from '../../log.js';
import type { HttpServer } from '../server.js';
import { registerOAuthAdminRoutes } from './admin-routes.js';
import { registerAuthorizeRoutes } from './authorize.js';
import { RESOURCE_PATH, type OAuthContext } from './context.js';
import { registerFormParser } from './form.js';
import { AUTHORIZATION_SERVER_METADATA_PATH, mcpUnauthorized, PROBED_PATHS, registerMetadataRoutes, RESOURCE_METADATA_PATHS } from './metadata.js';
import { registerRegistrationRoute } from './register.js';
import { registerTokenRoutes } from './token.js';

export interface OAuthDeps {
  http: HttpServer;
  db: Database.Database;
  users: UserTokenStore;
  adminToken: string;
  settings: OAuthConfig;
  /** http.public_url. */
  public_url: string | null;
  /** host:port of the HTTP listener, for requests whose Host header is unusable. */
  listenerHost: () => string;
  log: Logger;
}

export interface OAuthServer {
  clients: OAuthClientStore;
  grants: OAuthGrantStore;
}

/** Form bodies of the OAuth endpoints are a few parameters; a state of a few KB is the largest part. */
const FORM_BODY_LIMIT = 65_536;
/** Wrong tokens on the consent page: this many per address per window. */
const CONSENT_FAILURES = { max_failures: 10, window_ms: 15 * 60_000 };

function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

export function attachOAuth(deps: OAuthDeps): OAuthServer {
  const log = deps.log.child({ room: 'api', component: 'oauth' });
  const adminDigest = createHash('sha256').update(deps.adminToken, 'utf8').digest('hex');
  const approverValid = (approver: Approver, digest: string): boolean =>
    approver.kind === 'admin' ? sameDigest(digest, adminDigest) : sameDigest(digest, deps.users.currentDigest(approver.user_id) ?? '');
  const clients = new OAuthClientStore(deps.db);
  const grants = new OAuthGrantStore({ db: deps.db, settings: deps.settings, approverValid });
  const context: OAuthContext = {
    clients,
    grants,
    settings: deps.settings,
    publicUrl: { public_url: deps.public_url, fallbackHost: deps.listenerHost },
    identifyToken: (token) => {
      if (token === '') return undefined;
      const digest = tokenDigest(token);
      if (sameDigest(digest, adminDigest)) return { approver: { kind: 'admin' }, digest };
      const user = deps.users.verify(token);
      return user === undefined ? undefined : { approver: { kind: 'user', user_id: user }, digest };
    },
    consentFailures: new AttemptLimiter(CONSENT_FAILURES),
    log,
  };

  deps.http.addPublicPaths([
    AUTHORIZATION_SERVER_METADATA_PATH,
    ...RESOURCE_METADATA_PATHS,
    ...PROBED_PATHS,
    '/oauth/authorize',
    '/oauth/token',
    '/oauth/revoke',
    '/oauth/register',
  ]);
  deps.http.addBearerScheme({ appliesTo: (path) => path === RESOURCE_PATH, verify: (token) => grants.verifyAccess(token)?.principal });
  deps.http.onUnauthorized(mcpUnauthorized(context));
  void deps.http.app.register(async (scope) => {
    registerFormParser(scope, FORM_BODY_LIMIT);
    registerMetadataRoutes(scope, context);
    registerAuthorizeRoutes(scope, context);
    registerTokenRoutes(scope, context);
    registerRegistrationRoute(scope, context);
  });
  registerOAuthAdminRoutes(deps.http.app, context);
  return { clients, grants };
}

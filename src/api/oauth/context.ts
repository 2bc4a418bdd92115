// What the OAuth routes share: the stores, the settings, the URLs of this authorization server and of its
// one protected resource (/mcp), and OAuth's JSON error answer.
import { InvalidClientError, OAuthError, ServerError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AttemptLimiter } from '../../access/attempt-limiter.js';
import type { OAuthClientStore } from '../../access/oauth-clients.js';
import type { Approver, OAuthGrantStore } from '../../access/oauth-grants.js';
import type { OAuthConfig } from '../../config/types.js';
import type { Logger } from '../../log.js';
import { publicOrigin, type PublicUrlSettings } from '../public-url.js';

export interface OAuthContext {
  clients: OAuthClientStore;
  grants: OAuthGrantStore;
  settings: OAuthConfig;
  publicUrl: PublicUrlSettings;
  /** Who a token typed into the consent page belongs to, with its digest; undefined for a wrong token. */
  identifyToken(token: string): { approver: Approver; digest: string } | undefined;
  /** Wrong tokens on the consent page, per client address. */
  consentFailures: AttemptLimiter;
  log: Logger;
}

/** The protected resource's path: the Core's MCP endpoint. */
export const RESOURCE_PATH = '/mcp';

export interface ServerUrls {
  issuer: string;
  resource: string;
  authorization_endpoint: string;
  token_endpoint: string;
  registration_endpoint: string;
  revocation_endpoint: string;
  resource_metadata: string;
}

export function serverUrls(request: FastifyRequest, context: Pick<OAuthContext, 'publicUrl'>): ServerUrls {
  const origin = publicOrigin(request, context.publicUrl);
  return {
    issuer: origin,
    resource: `${origin}${RESOURCE_PATH}`,
    authorization_endpoint: `${origin}/oauth/authorize`,
    token_endpoint: `${origin}/oauth/token`,
    registration_endpoint: `${origin}/oauth/register`,
    revocation_endpoint: `${origin}/oauth/revoke`,
    resource_metadata: `${origin}/.well-known/oauth-protected-resource${RESOURCE_PATH}`,
  };
}

/** True when a `resource` parameter (RFC 8707) names this server's /mcp. */
export function isOurResource(value: string, urls: ServerUrls): boolean {
  try {
    return new URL(value).href === new URL(urls.resource).href;
  } catch {
    return false;
  }
}

/**
 * An OAuth error as RFC 6749 §5.2 answers it: 401 for failed client authentication (with a Basic
 * challenge when the client used Basic), 500 for server errors, 400 otherwise.
 */
export function sendOAuthError(reply: FastifyReply, error: OAuthError, basicUsed = false): FastifyReply {
  const status = error instanceof InvalidClientError ? 401 : error instanceof ServerError ? 500 : 400;
  if (status === 401 && basicUsed) reply.header('www-authenticate', 'Basic realm="homeclaw"');
  return reply.code(status).header('cache-control', 'no-store').header('pragma', 'no-cache').send(error.toResponseObject());
}

/** Route error handler for the JSON endpoints: OAuth errors as such, anything else logged and a server_error. */
export function oauthErrorHandler(log: Logger) {
  return (error: Error & { statusCode?: number }, request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    if (error instanceof OAuthError) return sendOAuthError(reply, error);
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send({ error: 'invalid_request', error_description: error.message });
    }
    log.error({ err: error, path: request.url }, 'OAuth endpoint failed');
    return sendOAuthError(reply, new ServerError('internal error (see the HomeClaw log)'));
  };
}

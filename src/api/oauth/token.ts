// The token endpoint (authorization_code with PKCE, refresh_token with rotation) and the revocation
// endpoint (RFC 7009). Clients authenticate with HTTP Basic (client_secret_basic), with client_id and
// client_secret in the body (client_secret_post, what Home Assistant sends), or, when registered as
// public clients, with client_id alone.
import {
  InvalidClientError,
  InvalidRequestError,
  InvalidTargetError,
  type OAuthError,
  UnsupportedGrantTypeError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OAuthClient } from '../../access/oauth-clients.js';
import type { IssuedTokens, Outcome } from '../../access/oauth-grants.js';
import { isOurResource, oauthErrorHandler, sendOAuthError, serverUrls, type OAuthContext } from './context.js';
import { listProblems } from '../route-validation.js';
import { paramsOf } from './form.js';
import { formProblems, GRANTS, RevocationRequest } from './form-schemas.js';

/** A client authentication failure, remembering whether Basic was used (the 401 then carries a Basic challenge). */
class ClientAuthError extends Error {
  constructor(
    readonly error: OAuthError,
    readonly basic: boolean,
  ) {
    super(error.message);
  }
}

function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

function authenticateClient(request: FastifyRequest, params: Record<string, string>, context: OAuthContext): OAuthClient {
  const header = request.headers.authorization;
  let clientId: string | undefined;
  let secret: string | undefined;
  const basic = typeof header === 'string' && /^basic /i.test(header);
  if (basic) {
    if (params['client_secret'] !== undefined)
      throw new ClientAuthError(new InvalidRequestError('use one client authentication method: HTTP Basic or client_secret in the body, not both'), true);
    let decoded: string;
    try {
      decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    } catch {
      throw new ClientAuthError(new InvalidClientError('the Basic credentials cannot be read'), true);
    }
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new ClientAuthError(new InvalidClientError('the Basic credentials must be client_id:client_secret'), true);
    try {
      clientId = formDecode(decoded.slice(0, colon));
      secret = formDecode(decoded.slice(colon + 1));
    } catch {
      throw new ClientAuthError(new InvalidClientError('the Basic credentials are not form-encoded'), true);
    }
    if (params['client_id'] !== undefined && params['client_id'] !== clientId) {
      throw new ClientAuthError(new InvalidRequestError('client_id in the body differs from the Basic credentials'), true);
    }
  } else {
    clientId = params['client_id'];
    secret = params['client_secret'];
  }
  if (!clientId) throw new ClientAuthError(new InvalidClientError('client authentication required (client_id)'), basic);
  const client = context.clients.authenticate(clientId, secret);
  if (!client) {
    context.log.warn({ client_id: clientId, ip: request.ip }, 'OAuth client authentication failed');
    throw new ClientAuthError(new InvalidClientError('client authentication failed (unknown client or wrong secret)'), basic);
  }
  return client;
}

function answer(reply: FastifyReply, outcome: Outcome<IssuedTokens>): FastifyReply {
  if (!outcome.ok) return sendOAuthError(reply, outcome.error);
  return reply.code(200).header('cache-control', 'no-store').header('pragma', 'no-cache').send(outcome.value);
}

export function registerTokenRoutes(app: FastifyInstance, context: OAuthContext): void {
  const log = context.log;
  const errorHandler = oauthErrorHandler(log);
  const withClient = async (
    request: FastifyRequest,
    reply: FastifyReply,
    then: (client: OAuthClient, params: Record<string, string>) => Promise<FastifyReply>,
  ) => {
    let params: Record<string, string>;
    let client: OAuthClient;
    try {
      params = paramsOf(request.body);
      client = authenticateClient(request, params, context);
    } catch (err) {
      if (err instanceof ClientAuthError) return sendOAuthError(reply, err.error, err.basic);
      throw err;
    }
    return then(client, params);
  };

  app.post('/oauth/token', { errorHandler }, async (request, reply) =>
    withClient(request, reply, async (client, params) => {
      const urls = serverUrls(request, context);
      const resource = params['resource'];
      if (resource !== undefined && !isOurResource(resource, urls))
        return sendOAuthError(reply, new InvalidTargetError(`this server protects only ${urls.resource}`));
      const grantType = params['grant_type'];
      if (!grantType) return sendOAuthError(reply, new InvalidRequestError('grant_type is required'));
      if (!Object.hasOwn(GRANTS, grantType))
        return sendOAuthError(reply, new UnsupportedGrantTypeError(`grant_type "${grantType}" is not supported (${Object.keys(GRANTS).join(', ')})`));
      const problems = formProblems(GRANTS[grantType as keyof typeof GRANTS], params);
      if (problems.length > 0) return sendOAuthError(reply, new InvalidRequestError(listProblems(problems)));
      const outcome: Outcome<IssuedTokens> =
        grantType === 'authorization_code'
          ? await context.grants.exchangeCode(client.client_id, params['code'] as string, params['code_verifier'] as string, params['redirect_uri'])
          : context.grants.refresh(client.client_id, params['refresh_token'] as string, params['scope']);
      if (outcome.ok) log.info({ client_id: client.client_id, grant_type: grantType }, 'OAuth tokens issued');
      else if (outcome.revoked)
        log.warn(
          { client_id: client.client_id, grant_type: grantType, grant_id: outcome.revoked, reason: outcome.error.message },
          'OAuth grant revoked: a code or token was replayed or misused',
        );
      else log.info({ client_id: client.client_id, grant_type: grantType, reason: outcome.error.message }, 'OAuth token request refused');
      return answer(reply, outcome);
    }),
  );

  app.post('/oauth/revoke', { errorHandler }, async (request, reply) =>
    withClient(request, reply, async (client, params) => {
      const problems = formProblems(RevocationRequest, params);
      if (problems.length > 0) return sendOAuthError(reply, new InvalidRequestError(listProblems(problems)));
      const result = context.grants.revokeToken(client.client_id, params['token'] as string);
      if (result === 'other-client') {
        log.warn({ client_id: client.client_id }, 'OAuth revocation refused: the token belongs to another client');
        return sendOAuthError(reply, new InvalidRequestError('the token was issued to another client'));
      }
      if (result === 'revoked') log.info({ client_id: client.client_id }, 'OAuth grant revoked by its client');
      // RFC 7009 §2.2: an unknown or already revoked token is answered like a revoked one.
      return reply.code(200).header('cache-control', 'no-store').send();
    }),
  );
}

// The authorization endpoint and its consent page (/oauth/authorize). GET checks the request and shows
// the page; the page POSTs the same parameters back with a token typed by a person: a user token (the
// grant acts as that user, under that user's policy) or the admin token (the grant acts as the admin, or
// as the user named in "Act as user"). Then the browser goes back to the client with a code.
//
// Checks happen in two phases, as OAuth requires. Until the client and its redirect URI are known good,
// errors are shown on an error page and NEVER redirected (an unregistered redirect URI may be an
// attacker's). After that, errors go back to the client's redirect URI with error=... and the state.
// The POST repeats every check from scratch: the hidden fields are the client's input, not the Core's.
import {
  InvalidRequestError,
  InvalidScopeError,
  InvalidTargetError,
  type OAuthError,
  UnsupportedResponseTypeError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OAuthClient } from '../../access/oauth-clients.js';
import type { Approver } from '../../access/oauth-grants.js';
import type { Principal } from '../../access/principal.js';
import { isUserId } from '../../access/user-id.js';
import { consentPage, errorPage, sendPage } from './consent-page.js';
import { isOurResource, serverUrls, type OAuthContext, type ServerUrls } from './context.js';
import { listProblems } from '../route-validation.js';
import { paramsOf, queryParams } from './form.js';
import { AuthorizationRequest, ConsentForm, formProblems } from './form-schemas.js';
/** offline_access is what some clients add to get refresh tokens; they always get one here. */
const ACCEPTED_SCOPES = new Set(['mcp', 'offline_access']);
const CARRIED = ['client_id', 'redirect_uri', 'response_type', 'code_challenge', 'code_challenge_method', 'scope', 'state', 'resource'] as const;

type Checked =
  | { kind: 'page'; status: number; title: string; message: string }
  | { kind: 'redirect'; redirect_uri: string; error: OAuthError; state?: string }
  | {
      kind: 'ok';
      client: OAuthClient;
      redirect_uri: string;
      redirect_uri_given: boolean;
      code_challenge: string;
      state?: string;
      hidden: Record<string, string>;
    };

function check(params: Record<string, string>, context: OAuthContext, urls: ServerUrls): Checked {
  const clientId = params['client_id'];
  if (!clientId) return { kind: 'page', status: 400, title: 'No client', message: 'The request names no client (client_id is missing).' };
  const client = context.clients.get(clientId);
  if (!client) {
    return {
      kind: 'page',
      status: 400,
      title: 'Unknown client',
      message: `No OAuth client "${clientId}" is registered with HomeClaw (it may have been removed). Add it with: homeclaw oauth clients add <name> --redirect-uri <uri>`,
    };
  }
  const given = params['redirect_uri'];
  let redirect_uri: string;
  if (given !== undefined) {
    if (!client.redirect_uris.includes(given)) {
      return {
        kind: 'page',
        status: 400,
        title: 'Redirect URI not registered',
        message: `The redirect URI "${given}" is not registered for the client "${client.name}"; the registered ones are: ${client.redirect_uris.join(', ')}.`,
      };
    }
    redirect_uri = given;
  } else if (client.redirect_uris.length === 1) {
    redirect_uri = client.redirect_uris[0] as string;
  } else {
    return {
      kind: 'page',
      status: 400,
      title: 'Redirect URI missing',
      message: `The client "${client.name}" has several redirect URIs; the request must name one (redirect_uri).`,
    };
  }

  const state = params['state'];
  // Anyone may register a client dynamically, with any redirect URI: sending its errors there unasked
  // would make this server a redirector to any site (RFC 9700, 4.11.2). Such a client's errors are shown
  // here; an operator's client (the CLI's) gets them at its redirect URI, as RFC 6749 says.
  const back = (error: OAuthError): Checked =>
    client.source === 'dynamic'
      ? { kind: 'page', status: 400, title: 'Invalid authorization request', message: `${error.errorCode}: ${error.message}` }
      : { kind: 'redirect', redirect_uri, error, ...(state !== undefined ? { state } : {}) };
  const problems = formProblems(AuthorizationRequest, params);
  if (problems.some((problem) => problem.path === '/response_type')) return back(new UnsupportedResponseTypeError('only response_type=code is supported'));
  if (problems.length > 0) return back(new InvalidRequestError(listProblems(problems)));
  const challenge = params['code_challenge'] as string;
  const scopes = (params['scope'] ?? '').split(' ').filter(Boolean);
  const unknown = scopes.filter((scope) => !ACCEPTED_SCOPES.has(scope));
  if (unknown.length > 0) return back(new InvalidScopeError(`unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}; this server grants "mcp"`));
  const resource = params['resource'];
  if (resource !== undefined && !isOurResource(resource, urls)) return back(new InvalidTargetError(`this server protects only ${urls.resource}`));

  const hidden: Record<string, string> = {};
  for (const key of CARRIED) {
    const value = params[key];
    if (value !== undefined) hidden[key] = value;
  }
  return {
    kind: 'ok',
    client,
    redirect_uri,
    redirect_uri_given: given !== undefined,
    code_challenge: challenge,
    ...(state !== undefined ? { state } : {}),
    hidden,
  };
}

function redirectTo(reply: FastifyReply, redirectUri: string, params: Record<string, string>): FastifyReply {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  return reply.code(302).header('location', url.href).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').send();
}

function answerProblem(reply: FastifyReply, checked: Exclude<Checked, { kind: 'ok' }>, urls: ServerUrls): FastifyReply {
  if (checked.kind === 'page') return sendPage(reply, checked.status, errorPage(checked.title, checked.message));
  return redirectTo(reply, checked.redirect_uri, {
    error: checked.error.errorCode,
    error_description: checked.error.message,
    ...(checked.state !== undefined ? { state: checked.state } : {}),
    iss: urls.issuer,
  });
}

function readParams(request: FastifyRequest, reply: FastifyReply, source: 'query' | 'body'): Record<string, string> | undefined {
  try {
    return source === 'query' ? queryParams(request.url) : paramsOf(request.body);
  } catch (err) {
    sendPage(reply, 400, errorPage('Bad request', (err as Error).message));
    return undefined;
  }
}

/** Who the grant acts as, from the approving token and the "Act as user" field, or why not. */
function actingPrincipal(approver: Approver, actAs: string): { principal: Principal } | { status: number; error: string } {
  if (approver.kind === 'user') {
    if (actAs === '' || actAs === approver.user_id) return { principal: { kind: 'user', user_id: approver.user_id } };
    return { status: 403, error: `This is the token of "${approver.user_id}": it can grant access only as "${approver.user_id}", not as "${actAs}".` };
  }
  if (actAs === '') return { principal: { kind: 'admin' } };
  if (!isUserId(actAs)) return { status: 400, error: `"${actAs}" is not a user id (letters, digits, _ . @ and -).` };
  return { principal: { kind: 'user', user_id: actAs } };
}

export function registerAuthorizeRoutes(app: FastifyInstance, context: OAuthContext): void {
  const log = context.log;

  app.get('/oauth/authorize', async (request, reply) => {
    const params = readParams(request, reply, 'query');
    if (!params) return reply;
    const urls = serverUrls(request, context);
    const checked = check(params, context, urls);
    if (checked.kind !== 'ok') {
      log.warn(
        { ip: request.ip, client_id: params['client_id'], problem: checked.kind === 'page' ? checked.message : checked.error.message },
        'OAuth authorization request refused',
      );
      return answerProblem(reply, checked, urls);
    }
    return sendPage(
      reply,
      200,
      consentPage({ client_name: checked.client.name, client_id: checked.client.client_id, redirect_uri: checked.redirect_uri, hidden: checked.hidden }),
    );
  });

  app.post('/oauth/authorize', async (request, reply) => {
    const blocked = context.consentFailures.blockedFor(request.ip);
    if (blocked > 0) {
      log.warn({ ip: request.ip }, 'OAuth consent refused: too many wrong tokens from this address');
      const minutes = Math.ceil(blocked / 60_000);
      return sendPage(
        reply.header('retry-after', String(Math.ceil(blocked / 1000))),
        429,
        errorPage('Too many attempts', `Too many wrong tokens from this address; try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`),
      );
    }
    const params = readParams(request, reply, 'body');
    if (!params) return reply;
    const urls = serverUrls(request, context);
    const checked = check(params, context, urls);
    if (checked.kind !== 'ok') return answerProblem(reply, checked, urls);
    const formIssues = formProblems(ConsentForm, params);
    if (formIssues.length > 0) return sendPage(reply, 400, errorPage('Bad request', listProblems(formIssues)));
    const { client } = checked;
    const state: Record<string, string> = checked.state !== undefined ? { state: checked.state } : {};
    if (params['decision'] !== 'allow') {
      log.info({ client_id: client.client_id, ip: request.ip }, 'OAuth consent denied');
      return redirectTo(reply, checked.redirect_uri, {
        error: 'access_denied',
        error_description: 'the person at the consent page denied access',
        ...state,
        iss: urls.issuer,
      });
    }
    const actAs = (params['act_as'] ?? '').trim();
    const again = (status: number, error: string): FastifyReply =>
      sendPage(
        reply,
        status,
        consentPage({
          client_name: client.name,
          client_id: client.client_id,
          redirect_uri: checked.redirect_uri,
          hidden: checked.hidden,
          error,
          act_as: actAs,
        }),
      );
    const identified = context.identifyToken((params['token'] ?? '').trim());
    if (!identified) {
      context.consentFailures.fail(request.ip);
      log.warn({ client_id: client.client_id, ip: request.ip }, 'OAuth consent refused: wrong token');
      return again(401, 'That token is not valid: use your user token or the admin token.');
    }
    const acting = actingPrincipal(identified.approver, actAs);
    if ('error' in acting) return again(acting.status, acting.error);
    const code = context.grants.createCode({
      client_id: client.client_id,
      principal: acting.principal,
      approver: identified.approver,
      approver_digest: identified.digest,
      redirect_uri: checked.redirect_uri,
      redirect_uri_given: checked.redirect_uri_given,
      code_challenge: checked.code_challenge,
      resource: urls.resource,
    });
    log.info(
      { client_id: client.client_id, client_name: client.name, acts_as: acting.principal, approved_by: identified.approver.kind, ip: request.ip },
      'OAuth consent given',
    );
    return redirectTo(reply, checked.redirect_uri, { code, ...state, iss: urls.issuer });
  });
}

// The parameters of the OAuth endpoints (RFC 6749, RFC 7636, RFC 7009), once: the handlers check
// requests against these schemas and the OpenAPI document shows them. Parameters a schema does not name
// are ignored, as RFC 6749 §3.1 requires. Which OAuth error a failed check becomes (invalid_request,
// unsupported_grant_type, unsupported_response_type) and when a problem is shown on a page instead of
// being sent back to the client are the handlers' protocol rules.
import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import type { ValidationIssue } from '../../protocol/types.js';
import { schemaProblems } from '../route-validation.js';

const open = { additionalProperties: true } as const;
/** One allowed value, written as an enum: the OpenAPI document (3.0-compatible) shows const as enum. */
const only = <T extends string>(value: T) => Type.Unsafe<T>({ type: 'string', enum: [value] });
const text = (description: string) => Type.String({ description });
const resource = Type.Optional(text('This server’s /mcp URL (RFC 8707).'));
const clientAuth = {
  client_id: Type.Optional(text('The client, unless it authenticates with HTTP Basic.')),
  client_secret: Type.Optional(text('client_secret_post: the secret in the body instead of HTTP Basic.')),
};

export const AuthorizationCodeGrant = Type.Object(
  {
    grant_type: only('authorization_code'),
    code: Type.String({ minLength: 1, description: 'The code the authorization endpoint sent back to the client.' }),
    code_verifier: Type.String({
      pattern: '^[A-Za-z0-9._~-]{43,128}$',
      description: 'the PKCE verifier (RFC 7636), 43 to 128 characters of A-Z a-z 0-9 - . _ ~',
    }),
    redirect_uri: Type.Optional(text('Required when the authorization request named one, and then the same.')),
    resource,
    ...clientAuth,
  },
  open,
);

export const RefreshTokenGrant = Type.Object(
  {
    grant_type: only('refresh_token'),
    refresh_token: Type.String({ minLength: 1, description: 'The refresh token; it is rotated: the answer carries a new one.' }),
    scope: Type.Optional(text('At most the scope of the original grant.')),
    resource,
    ...clientAuth,
  },
  open,
);

export const GRANTS = { authorization_code: AuthorizationCodeGrant, refresh_token: RefreshTokenGrant } as const;
export const TokenRequest = Type.Union([AuthorizationCodeGrant, RefreshTokenGrant], { description: 'One of the two grants, by grant_type.' });

export const RevocationRequest = Type.Object(
  {
    token: Type.String({ minLength: 1, description: 'An access or refresh token of this client; its whole grant ends.' }),
    token_type_hint: Type.Optional(text('access_token or refresh_token (not needed: both are recognised).')),
    ...clientAuth,
  },
  open,
);

/** What the client sends to the authorization endpoint (the query of GET, the hidden fields of the consent form). */
export const AuthorizationRequest = Type.Object(
  {
    client_id: text('The registered client.'),
    redirect_uri: Type.Optional(text('One of the client’s registered redirect URIs; required when it has several.')),
    response_type: only('code'),
    code_challenge: Type.String({ pattern: '^[A-Za-z0-9_-]{43}$', description: 'the 43-character base64url SHA-256 of the code verifier (PKCE, method S256)' }),
    code_challenge_method: only('S256'),
    scope: Type.Optional(text('mcp (offline_access is accepted too).')),
    state: Type.Optional(text('Sent back to the client unchanged.')),
    resource,
  },
  open,
);

/** The consent page's form: the authorization request again, with the person's token and decision. */
export const ConsentForm = Type.Composite(
  [
    AuthorizationRequest,
    Type.Object({
      token: text('A user token (the grant acts as that user) or the admin token.'),
      act_as: Type.Optional(text('With the admin token: the user the grant acts as (empty: the admin).')),
      decision: Type.Unsafe<'allow' | 'deny'>({ type: 'string', enum: ['allow', 'deny'] }),
    }),
  ],
  open,
);

/**
 * Every problem of `params` against `schema`, each naming the parameter and the rule; a value that does
 * not match its pattern also gets the parameter's description, which says the rule in words.
 */
export function formProblems(schema: TObject, params: Record<string, string>): ValidationIssue[] {
  return schemaProblems(schema, params).map((problem) => {
    const property: TSchema | undefined = schema.properties[problem.path.slice(1)];
    return property?.description && problem.message.includes(' must match ')
      ? { ...problem, message: `${problem.message} (${property.description})` }
      : problem;
  });
}

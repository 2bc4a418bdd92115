// The OpenAPI description of the OpenAI-compatible endpoint, the OAuth authorization server of /mcp and
// its administration. buildOpenApiDocument merges these into its paths and components.
import type { JsonObject } from '../protocol/types.js';
import { AuthorizationRequest, ConsentForm, RevocationRequest, TokenRequest } from './oauth/form-schemas.js';

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonObject): JsonObject => ({ 'application/json': { schema } });
const ok = (description: string, schema: JsonObject): JsonObject => ({ description, content: json(schema) });
const error = (name: string): JsonObject => ({ $ref: `#/components/responses/${name}` });
const op = (operationId: string, summary: string, tags: string[], rest: JsonObject): JsonObject => ({ operationId, summary, tags, ...rest });
const pathParameter = (name: string, description: string): JsonObject => ({ name, in: 'path', required: true, description, schema: { type: 'string' } });
// The OAuth forms' schemas are the ones their handlers check (TypeBox objects are JSON Schema).
const form = (schema: object): JsonObject => ({ required: true, content: { 'application/x-www-form-urlencoded': { schema: schema as JsonObject } } });
const html = (description: string): JsonObject => ({ description, content: { 'text/html': { schema: { type: 'string' } } } });
const openAiError = (description: string): JsonObject => ok(description, ref('OpenAiError'));
const oauthError = (description: string): JsonObject => ok(description, ref('OAuthErrorResponse'));
const publicOp = { security: [] };
const str = { type: 'string' };

export function frontDoorSchemas(): Record<string, JsonObject> {
  return {
    OpenAiError: {
      type: 'object',
      required: ['error'],
      properties: {
        error: {
          type: 'object',
          required: ['message', 'type', 'param', 'code'],
          properties: { message: str, type: str, param: { type: ['string', 'null'] }, code: { type: ['string', 'null'] } },
        },
      },
    },
    OpenAiModel: {
      type: 'object',
      required: ['id', 'object', 'created', 'owned_by'],
      properties: { id: { const: 'homeclaw' }, object: { const: 'model' }, created: { type: 'integer' }, owned_by: str },
    },
    OpenAiModelList: {
      type: 'object',
      required: ['object', 'data'],
      properties: { object: { const: 'list' }, data: { type: 'array', items: ref('OpenAiModel') } },
    },
    ChatCompletion: {
      type: 'object',
      required: ['id', 'object', 'created', 'model', 'choices', 'usage'],
      properties: {
        id: str,
        object: { const: 'chat.completion' },
        created: { type: 'integer' },
        model: { const: 'homeclaw' },
        choices: {
          type: 'array',
          items: {
            type: 'object',
            required: ['index', 'message', 'finish_reason'],
            properties: {
              index: { type: 'integer' },
              message: { type: 'object', required: ['role', 'content'], properties: { role: { const: 'assistant' }, content: str } },
              finish_reason: { const: 'stop' },
            },
          },
        },
        usage: { type: 'object', required: ['prompt_tokens', 'completion_tokens', 'total_tokens'] },
      },
    },
    OAuthErrorResponse: { type: 'object', required: ['error'], properties: { error: str, error_description: str } },
    OAuthTokenResponse: {
      type: 'object',
      required: ['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope'],
      properties: { access_token: str, token_type: { const: 'Bearer' }, expires_in: { type: 'integer' }, refresh_token: str, scope: { const: 'mcp' } },
    },
    OAuthClient: {
      type: 'object',
      required: ['client_id', 'name', 'redirect_uris', 'auth_method', 'source', 'created_at', 'last_used_at'],
      properties: {
        client_id: str,
        name: str,
        redirect_uris: { type: 'array', items: str },
        auth_method: { enum: ['client_secret_basic', 'client_secret_post', 'none'] },
        source: { enum: ['cli', 'dynamic'] },
        created_at: { type: 'integer' },
        last_used_at: { type: ['integer', 'null'] },
        client_secret: { type: 'string', description: 'Only in the answer to POST /api/oauth/clients: shown once.' },
      },
    },
  };
}

export function frontDoorPaths(): Record<string, JsonObject> {
  const standard = { '400': error('BadRequest'), '401': error('Unauthorized'), '403': error('Forbidden') };
  const anyObject = { type: 'object' };
  return {
    '/v1/chat/completions': {
      post: op('createChatCompletion', 'OpenAI-compatible chat: the last user message through the conversation engine (user tokens allowed)', ['openai'], {
        responses: {
          '200': {
            description:
              'A chat completion, or with stream: true server-sent chat.completion.chunk events ending with data: [DONE]. Headers: x-homeclaw-session, x-homeclaw-kind, x-homeclaw-note.',
            content: { ...json(ref('ChatCompletion')), 'text/event-stream': { schema: str } },
          },
          '400': openAiError('Invalid request (the parameter is named).'),
          '401': openAiError('Wrong or missing API key.'),
          '403': openAiError('A user token naming another user.'),
          '404': openAiError('Unknown model.'),
          '413': openAiError('The body is larger than openai_endpoint.max_body_bytes.'),
          '415': openAiError('The body is not JSON.'),
        },
      }),
    },
    '/v1/models': {
      get: op('listModels', 'OpenAI-compatible model list: homeclaw (user tokens allowed)', ['openai'], {
        responses: { '200': ok('The models.', ref('OpenAiModelList')), '401': openAiError('Wrong or missing API key.') },
      }),
    },
    '/v1/models/{model}': {
      get: op('retrieveModel', 'One model (user tokens allowed)', ['openai'], {
        parameters: [pathParameter('model', 'The model id: homeclaw.')],
        responses: { '200': ok('The model.', ref('OpenAiModel')), '401': openAiError('Wrong or missing API key.'), '404': openAiError('Unknown model.') },
      }),
    },
    '/.well-known/oauth-authorization-server': {
      get: op('oauthServerMetadata', 'Authorization server metadata (RFC 8414)', ['oauth'], {
        ...publicOp,
        responses: { '200': ok('The metadata.', anyObject) },
      }),
    },
    '/.well-known/oauth-protected-resource': {
      get: op('oauthResourceMetadataRoot', 'Protected resource metadata of /mcp (RFC 9728), root URL', ['oauth'], {
        ...publicOp,
        responses: { '200': ok('The metadata.', anyObject) },
      }),
    },
    '/.well-known/oauth-protected-resource/mcp': {
      get: op('oauthResourceMetadata', 'Protected resource metadata of /mcp (RFC 9728)', ['oauth'], {
        ...publicOp,
        responses: { '200': ok('The metadata.', anyObject) },
      }),
    },
    '/oauth/authorize': {
      get: op('oauthAuthorize', 'Authorization endpoint: the consent page (code flow with PKCE S256)', ['oauth'], {
        ...publicOp,
        parameters: Object.entries(AuthorizationRequest.properties).map(([name, schema]) => ({
          name,
          in: 'query',
          required: (AuthorizationRequest.required as readonly string[] | undefined)?.includes(name) ?? false,
          schema: schema as JsonObject,
        })),
        responses: {
          '200': html('The consent page.'),
          '302': { description: 'Back to the client with error=... (after its client and redirect URI were checked).' },
          '400': html('Unknown client or unregistered redirect URI: an error page, no redirect.'),
        },
      }),
      post: op('oauthConsent', 'The consent form: a user token or the admin token approves', ['oauth'], {
        ...publicOp,
        requestBody: form(ConsentForm),
        responses: {
          '302': { description: 'Back to the client with code, state and iss (or error=access_denied).' },
          '400': html('A bad request: an error page.'),
          '401': html('A wrong token: the page again.'),
          '403': html('A user token granting as someone else: the page again.'),
          '429': html('Too many wrong tokens from this address.'),
        },
      }),
    },
    '/oauth/token': {
      post: op('oauthToken', 'Token endpoint: authorization_code (with PKCE) and refresh_token (rotated)', ['oauth'], {
        ...publicOp,
        requestBody: form(TokenRequest),
        responses: {
          '200': ok('New tokens.', ref('OAuthTokenResponse')),
          '400': oauthError('invalid_request, invalid_grant, unsupported_grant_type, invalid_target...'),
          '401': oauthError('invalid_client.'),
        },
      }),
    },
    '/oauth/revoke': {
      post: op('oauthRevoke', 'Revocation (RFC 7009): the grant of the token ends', ['oauth'], {
        ...publicOp,
        requestBody: form(RevocationRequest),
        responses: {
          '200': { description: 'Revoked (also for an unknown token).' },
          '400': oauthError('A token of another client.'),
          '401': oauthError('invalid_client.'),
        },
      }),
    },
    '/oauth/register': {
      post: op('oauthRegister', 'Dynamic client registration (RFC 7591), when oauth.dynamic_registration is on', ['oauth'], {
        ...publicOp,
        requestBody: { required: true, content: json(anyObject) },
        responses: {
          '201': ok('The client, with its secret (never expires).', anyObject),
          '400': oauthError('invalid_client_metadata or invalid_redirect_uri.'),
          '403': oauthError('Registration is off, or too many clients.'),
        },
      }),
    },
    '/api/oauth/clients': {
      get: op('listOAuthClients', 'OAuth clients (never their secrets)', ['admin'], {
        responses: {
          '200': ok('Every client.', { type: 'object', required: ['clients'], properties: { clients: { type: 'array', items: ref('OAuthClient') } } }),
          ...standard,
        },
      }),
      post: op('addOAuthClient', 'Add an OAuth client; its secret is shown once', ['admin'], {
        responses: { '201': ok('The client with its secret.', ref('OAuthClient')), ...standard, '409': error('Conflict') },
      }),
    },
    '/api/oauth/clients/{client}': {
      delete: op('removeOAuthClient', 'Remove an OAuth client (by id, or by name when unique) and end its grants', ['admin'], {
        parameters: [pathParameter('client', 'The client id or name.')],
        responses: { '200': ok('Removed.', anyObject), ...standard, '404': error('NotFound'), '409': error('Conflict') },
      }),
    },
    '/api/oauth/grants': {
      get: op('listOAuthGrants', 'Live OAuth grants: client, who they act as, who approved them', ['admin'], {
        responses: { '200': ok('Every grant.', anyObject), ...standard },
      }),
    },
    '/api/oauth/tokens/revoke': {
      post: op('revokeOAuthTokens', 'End OAuth grants by client, by user, or all', ['admin'], {
        responses: {
          '200': ok('How many grants ended.', { type: 'object', required: ['revoked'], properties: { revoked: { type: 'integer' } } }),
          ...standard,
          '404': error('NotFound'),
        },
      }),
    },
  };
}

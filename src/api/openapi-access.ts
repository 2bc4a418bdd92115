// The OpenAPI description of the access routes: user tokens, credential removal and rotation, plugin
// transfer, the audit log and the profile PUT. buildOpenApiDocument merges these into its paths.
import type { JsonObject } from '../protocol/types.js';

const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: JsonObject): JsonObject => ({ 'application/json': { schema } });
const ok = (description: string, schema: JsonObject): JsonObject => ({ description, content: json(schema) });
const error = (name: string): JsonObject => ({ $ref: `#/components/responses/${name}` });
const op = (operationId: string, summary: string, tags: string[], rest: JsonObject): JsonObject => ({ operationId, summary, tags, ...rest });

const USER_ID = { type: 'string', pattern: '^[A-Za-z0-9_.@-]{1,128}$' };
const NAME = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,63}$' };
const insufficientStorage = ok('The data volume is full: nothing was saved (the message names the operation).', ref('ErrorBody'));

export function accessSchemas(): Record<string, JsonObject> {
  return {
    UserList: {
      type: 'object',
      required: ['users'],
      properties: {
        users: {
          type: 'array',
          items: {
            type: 'object',
            required: ['user_id', 'created_at', 'last_used_at'],
            properties: { user_id: USER_ID, created_at: { type: 'integer' }, last_used_at: { type: ['integer', 'null'] } },
          },
        },
      },
    },
    NewUserToken: {
      type: 'object',
      required: ['user_id', 'token'],
      properties: {
        user_id: USER_ID,
        token: { type: 'string', description: 'Shown once; only its SHA-256 is stored. Send as "Authorization: Bearer <token>".' },
      },
    },
    CredentialRemoved: {
      type: 'object',
      required: ['name', 'removed', 'disconnected'],
      properties: {
        name: NAME,
        removed: { const: true },
        disconnected: { type: 'integer', minimum: 0, description: 'Live MQTT sessions closed (embedded broker).' },
      },
    },
    RotatedCredential: {
      type: 'object',
      required: ['name', 'password', 'disconnected'],
      properties: { name: NAME, password: { type: 'string', description: 'Shown once.' }, disconnected: { type: 'integer', minimum: 0 } },
    },
    TransferResponse: {
      type: 'object',
      required: ['plugin_id', 'owner', 'previous_owner'],
      properties: { plugin_id: { type: 'string' }, owner: { type: 'string' }, previous_owner: { type: 'string' } },
    },
    AuditList: {
      type: 'object',
      required: ['entries', 'count'],
      properties: {
        count: { type: 'integer', minimum: 0 },
        entries: {
          type: 'array',
          description: 'Newest first. Never parameter values.',
          items: {
            type: 'object',
            required: ['id', 'ts', 'user_id', 'channel', 'plugin_id', 'capability_id', 'outcome', 'duration_ms'],
            properties: {
              id: { type: 'integer' },
              ts: { type: 'integer', description: 'Milliseconds since the epoch.' },
              user_id: { type: ['string', 'null'], description: 'null: the admin token or the CLI.' },
              channel: { type: ['string', 'null'] },
              plugin_id: { type: 'string' },
              capability_id: { type: 'string' },
              outcome: { type: 'string', description: 'ok, or the error code (forbidden, confirmation_required, timeout, ...).' },
              duration_ms: { type: 'integer', minimum: 0 },
            },
          },
        },
      },
    },
  };
}

export function accessPaths(): Record<string, JsonObject> {
  const standard = { '400': error('BadRequest'), '401': error('Unauthorized'), '403': error('Forbidden') };
  return {
    '/api/users': {
      get: op('listUsers', 'Users with an HTTP token (never the tokens)', ['admin'], { responses: { '200': ok('Every user.', ref('UserList')), ...standard } }),
      post: op('addUser', 'Create a user token; it is shown once', ['admin'], {
        responses: { '201': ok('The new token.', ref('NewUserToken')), ...standard, '409': error('Conflict'), '507': insufficientStorage },
      }),
    },
    '/api/users/{user}': {
      delete: op('removeUser', "Delete a user's token", ['admin'], {
        responses: { '200': ok('Removed.', { type: 'object', required: ['user_id', 'removed'] }), ...standard, '404': error('NotFound') },
      }),
    },
    '/api/users/{user}/rotate': {
      post: op('rotateUser', 'A new token for a user; the old one stops working', ['admin'], {
        responses: { '200': ok('The new token.', ref('NewUserToken')), ...standard, '404': error('NotFound') },
      }),
    },
    '/api/credentials/{name}': {
      delete: op('removeCredential', 'Delete an MQTT credential and disconnect its live sessions', ['admin'], {
        responses: { '200': ok('Removed.', ref('CredentialRemoved')), ...standard, '404': error('NotFound') },
      }),
    },
    '/api/credentials/{name}/rotate': {
      post: op('rotateCredential', 'A new password (shown once); the old one stops working and its sessions are disconnected', ['admin'], {
        responses: { '200': ok('The new password.', ref('RotatedCredential')), ...standard, '404': error('NotFound') },
      }),
    },
    '/api/plugins/{id}/transfer': {
      post: op('transferPlugin', 'Give an MQTT plugin id to another plugin credential', ['admin'], {
        responses: { '200': ok('The new owner.', ref('TransferResponse')), ...standard, '404': error('NotFound'), '409': error('Conflict') },
      }),
    },
    '/api/audit': {
      get: op('getAudit', 'The audit log: who invoked what, through which channel, how it ended', ['admin'], {
        responses: { '200': ok('Matching entries, newest first.', ref('AuditList')), ...standard },
      }),
    },
    '/api/profiles/{user}': {
      put: op('replaceProfile', "Replace a user's whole profile (a user token: its own only)", ['conversation'], {
        responses: { '200': ok('The profile after the change.', ref('Profile')), ...standard, '507': insufficientStorage },
      }),
    },
  };
}

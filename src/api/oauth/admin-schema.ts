// The bodies of the OAuth administration routes: they validate the requests and are what the OpenAPI
// document shows. The client store keeps its own rules for names and redirect URIs (dynamic
// registration shares them), naming the offending value.
import { type Static, Type } from '@sinclair/typebox';
import { USER_ID_PATTERN } from '../../access/user-id.js';

export const OAuthClientRequest = Type.Object(
  {
    name: Type.String({ description: 'A name unique among the clients: 1 to 64 letters, digits, spaces, _ . or -.' }),
    redirect_uris: Type.Array(Type.String(), { description: 'Where the authorization server may send the user back (http(s), no fragment).' }),
  },
  { additionalProperties: false },
);
export type OAuthClientRequest = Static<typeof OAuthClientRequest>;

export const RevokeGrantsRequest = Type.Object(
  {
    client: Type.Optional(Type.String({ description: 'A client id, or a name when unique.' })),
    user_id: Type.Optional(Type.String({ pattern: USER_ID_PATTERN.source, description: 'The user the grants act as.' })),
    all: Type.Optional(Type.Boolean({ description: 'true: every grant.' })),
  },
  { additionalProperties: false, description: 'Say what to revoke: client, user_id, or "all": true (together they narrow).' },
);
export type RevokeGrantsRequest = Static<typeof RevokeGrantsRequest>;

// The inputs of the MQTT credential routes: they validate the requests and are what the OpenAPI
// document shows. The credential store checks the ids in the lists and its own rules (e.g. users only
// on channel credentials), naming the offending value.
import { type Static, Type } from '@sinclair/typebox';
import { CREDENTIAL_ROLES, type CredentialRole } from '../../bus/credentials.js';
import { PLUGIN_ID_PATTERN } from '../../protocol/ids.js';

const credentialName = (description: string) => Type.String({ pattern: PLUGIN_ID_PATTERN.source, description });

export const CredentialRequest = Type.Object(
  {
    name: credentialName('The MQTT username.'),
    role: Type.Unsafe<CredentialRole>({ type: 'string', enum: [...CREDENTIAL_ROLES], description: 'What the credential may do on the broker.' }),
    plugin_ids: Type.Optional(Type.Array(Type.String(), { description: 'Plugin ids a plugin credential may act for; default [name].' })),
    channels: Type.Optional(Type.Array(Type.String(), { description: 'Channels a channel credential may act for; default [name].' })),
    users: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Users a channel credential may speak as ("*": anyone); default [name]. Channel credentials only.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CredentialRequest = Static<typeof CredentialRequest>;

export const CredentialParams = Type.Object({ name: credentialName('The credential name.') });
export type CredentialParams = Static<typeof CredentialParams>;

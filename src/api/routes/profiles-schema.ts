// The inputs of /api/profiles/:user: they validate the requests and are what the OpenAPI document shows.
import { type Static, Type } from '@sinclair/typebox';
import { USER_ID_PATTERN } from '../../access/user-id.js';
import type { JsonValue } from '../../protocol/types.js';

/**
 * What one profile may hold. A profile is a few facts about a person (address, phone, city); without a
 * bound a user token could grow the database without end (three requests of 1,300 keys took it to 22 MB).
 */
export const PROFILE_LIMITS = { keys: 200, bytes: 64 * 1024 } as const;

/** A profile key (e.g. address, home.city). */
export const PROFILE_KEY = '^[A-Za-z0-9_.-]{1,64}$';

export const ProfileParams = Type.Object({ user: Type.String({ pattern: USER_ID_PATTERN.source, description: 'The user id.' }) });
export type ProfileParams = Static<typeof ProfileParams>;

const values = (description: string) => Type.Unsafe<Record<string, JsonValue>>({ type: 'object', propertyNames: { pattern: PROFILE_KEY }, description });

/** PUT: the whole profile, replacing what was there. */
export const ProfileReplace = Type.Object({ profile: values(`The whole profile: keys (${PROFILE_KEY}) and their values.`) }, { additionalProperties: false });
export type ProfileReplace = Static<typeof ProfileReplace>;

/** POST: keys to set and keys to remove. */
export const ProfileUpdate = Type.Object(
  {
    set: Type.Optional(values(`Profile keys to set (${PROFILE_KEY}) and their values.`)),
    unset: Type.Optional(Type.Array(Type.String(), { description: 'Profile keys to remove.' })),
  },
  { additionalProperties: false },
);
export type ProfileUpdate = Static<typeof ProfileUpdate>;

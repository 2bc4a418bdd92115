// The inputs of the user token routes: they validate the requests and are what the OpenAPI document shows.
import { type Static, Type } from '@sinclair/typebox';
import { USER_ID_PATTERN } from '../../access/user-id.js';

const userId = (description: string) => Type.String({ pattern: USER_ID_PATTERN.source, description });

export const UserRequest = Type.Object({ user_id: userId('Who the token acts as.') }, { additionalProperties: false });
export type UserRequest = Static<typeof UserRequest>;

export const UserParams = Type.Object({ user: userId('The user id.') });
export type UserParams = Static<typeof UserParams>;

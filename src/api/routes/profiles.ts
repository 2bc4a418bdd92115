// User profiles over HTTP, for `homeclaw profile set|show` and for household dashboards.
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, preValidationHookHandler } from 'fastify';
import { mayActAs } from '../../access/principal.js';
import type { ProfileStore } from '../../conversation/resolver-api.js';
import { guardDiskFull } from '../../kit/disk-full.js';
import type { JsonValue } from '../../protocol/types.js';
import { sendError } from '../errors.js';
import { principalOf, USER_ROUTE } from '../principal-auth.js';
import { validatedRoute } from '../route-validation.js';
import { PROFILE_LIMITS, ProfileParams, ProfileReplace, ProfileUpdate } from './profiles-schema.js';

export interface ProfileRoutesDeps {
  profiles: ProfileStore & { replace?(userId: string, values: Record<string, JsonValue>): void };
}

/**
 * A user token reads and writes only its own profile. Checked before the request's schema, so a
 * token learns nothing about another user's profile, not even what a valid request for it looks like.
 */
const ownProfile: preValidationHookHandler = async (request, reply) => {
  const principal = principalOf(request);
  const { user } = request.params as { user: string };
  if (mayActAs(principal, user)) return;
  await sendError(reply, 403, `this token acts as "${principal.kind === 'user' ? principal.user_id : ''}"; it may not read or change the profile of "${user}"`);
};

/** Why a profile would be too large, or undefined when it fits PROFILE_LIMITS. */
function overLimits(profile: Record<string, JsonValue>): string | undefined {
  const keys = Object.keys(profile).length;
  if (keys > PROFILE_LIMITS.keys) return `the profile would hold ${keys} keys; a profile holds at most ${PROFILE_LIMITS.keys}`;
  const bytes = Buffer.byteLength(JSON.stringify(profile));
  if (bytes > PROFILE_LIMITS.bytes) return `the profile would be ${bytes} bytes of JSON; a profile holds at most ${PROFILE_LIMITS.bytes}`;
  return undefined;
}

export function registerProfileRoutes(app: FastifyInstance, deps: ProfileRoutesDeps): void {
  const route = (body: TSchema | undefined, invalid: string) => ({
    ...validatedRoute({ params: ProfileParams, ...(body ? { body } : {}) }, { params: 'invalid user id', body: invalid }, USER_ROUTE),
    preValidation: ownProfile,
  });

  app.get<{ Params: ProfileParams }>('/api/profiles/:user', route(undefined, 'invalid user id'), async (request) => {
    const { user } = request.params;
    return { user_id: user, profile: deps.profiles.get(user) };
  });

  app.put<{ Params: ProfileParams; Body: ProfileReplace }>('/api/profiles/:user', route(ProfileReplace, 'invalid profile'), async (request, reply) => {
    const { user } = request.params;
    const values = request.body.profile;
    const tooLarge = overLimits(values);
    if (tooLarge) return sendError(reply, 400, tooLarge, [{ path: '/profile', message: tooLarge }]);
    guardDiskFull(`saving the profile of ${user}`, () => {
      if (deps.profiles.replace) deps.profiles.replace(user, values);
      else {
        deps.profiles.unset(
          user,
          Object.keys(deps.profiles.get(user)).filter((key) => !(key in values)),
        );
        deps.profiles.set(user, values);
      }
    });
    request.log.info({ user_id: user, keys: Object.keys(values) }, 'profile replaced');
    return { user_id: user, profile: deps.profiles.get(user) };
  });

  app.post<{ Params: ProfileParams; Body: ProfileUpdate }>('/api/profiles/:user', route(ProfileUpdate, 'invalid profile update'), async (request, reply) => {
    const { user } = request.params;
    const values = request.body.set ?? {};
    const unset = request.body.unset ?? [];
    const after: Record<string, JsonValue> = { ...deps.profiles.get(user), ...values };
    for (const key of unset) delete after[key];
    const tooLarge = overLimits(after);
    if (tooLarge) return sendError(reply, 400, tooLarge, [{ path: '/set', message: tooLarge }]);
    const profile = guardDiskFull(`saving the profile of ${user}`, () => {
      if (Object.keys(values).length > 0) deps.profiles.set(user, values);
      return unset.length > 0 ? deps.profiles.unset(user, unset) : deps.profiles.get(user);
    });
    request.log.info({ user_id: user, keys: Object.keys(values), unset }, 'profile updated');
    return { user_id: user, profile };
  });
}

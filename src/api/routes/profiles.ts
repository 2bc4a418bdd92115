// User profiles over HTTP, for `homeclaw profile set|show` and for household dashboards.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { mayActAs } from '../../access/principal.js';
import type { ProfileStore } from '../../conversation/resolver-api.js';
import { guardDiskFull } from '../../kit/disk-full.js';
import type { JsonValue } from '../../protocol/types.js';
import { sendError } from '../errors.js';
import { principalOf, USER_ROUTE } from '../principal-auth.js';
import { isPlainObject } from '../../kit/plain-object.js';

export interface ProfileRoutesDeps {
  profiles: ProfileStore & { replace?(userId: string, values: Record<string, JsonValue>): void };
}

/** A user token reads and writes only its own profile; answers the 403 and returns false otherwise. */
function ownProfile(request: FastifyRequest, reply: FastifyReply, user: string): boolean {
  const principal = principalOf(request);
  if (mayActAs(principal, user)) return true;
  void sendError(reply, 403, `this token acts as "${principal.kind === 'user' ? principal.user_id : ''}"; it may not read or change the profile of "${user}"`);
  return false;
}

const USER_ID = /^[A-Za-z0-9_.@-]{1,128}$/;
const KEY = /^[A-Za-z0-9_.-]{1,64}$/;

export function registerProfileRoutes(app: FastifyInstance, deps: ProfileRoutesDeps): void {
  app.get<{ Params: { user: string } }>('/api/profiles/:user', USER_ROUTE, async (request, reply) => {
    const { user } = request.params;
    if (!USER_ID.test(user)) return sendError(reply, 400, `invalid user id "${user}"`);
    if (!ownProfile(request, reply, user)) return reply;
    return { user_id: user, profile: deps.profiles.get(user) };
  });

  /** Body: { profile: {key: value} }: the whole profile, replacing what was there. */
  app.put<{ Params: { user: string } }>('/api/profiles/:user', USER_ROUTE, async (request, reply) => {
    const { user } = request.params;
    if (!USER_ID.test(user)) return sendError(reply, 400, `invalid user id "${user}"`);
    if (!ownProfile(request, reply, user)) return reply;
    const body = request.body as { profile?: unknown } | null;
    const profile = body?.profile;
    const problems: { path: string; message: string }[] = [];
    if (!isPlainObject(body)) problems.push({ path: '', message: 'the body must be {"profile": {key: value, ...}}' });
    else {
      for (const key of Object.keys(body)) if (key !== 'profile') problems.push({ path: `/${key}`, message: `unknown field "${key}"` });
      if (!isPlainObject(profile)) problems.push({ path: '/profile', message: 'profile must be an object of key: value' });
      else for (const key of Object.keys(profile)) if (!KEY.test(key)) problems.push({ path: `/profile/${key}`, message: 'invalid profile key' });
    }
    if (problems.length > 0) return sendError(reply, 400, 'invalid profile', problems);
    const values = profile as Record<string, JsonValue>;
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

  /** Body: { set?: {key: value}, unset?: [key] }. */
  app.post<{ Params: { user: string } }>('/api/profiles/:user', USER_ROUTE, async (request, reply) => {
    const { user } = request.params;
    if (!USER_ID.test(user)) return sendError(reply, 400, `invalid user id "${user}"`);
    if (!ownProfile(request, reply, user)) return reply;
    const body = (request.body ?? {}) as { set?: unknown; unset?: unknown };
    const problems: { path: string; message: string }[] = [];
    const set = body.set ?? {};
    if (!isPlainObject(set)) problems.push({ path: '/set', message: 'set must be an object of key: value' });
    else for (const key of Object.keys(set)) if (!KEY.test(key)) problems.push({ path: `/set/${key}`, message: 'invalid profile key' });
    const unset = body.unset ?? [];
    if (!Array.isArray(unset) || unset.some((k) => typeof k !== 'string')) problems.push({ path: '/unset', message: 'unset must be an array of keys' });
    if (problems.length > 0) return sendError(reply, 400, 'invalid profile update', problems);
    const values = set as Record<string, JsonValue>;
    const profile = guardDiskFull(`saving the profile of ${user}`, () => {
      if (Object.keys(values).length > 0) deps.profiles.set(user, values);
      return (unset as string[]).length > 0 ? deps.profiles.unset(user, unset as string[]) : deps.profiles.get(user);
    });
    request.log.info({ user_id: user, keys: Object.keys(values), unset }, 'profile updated');
    return { user_id: user, profile };
  });
}

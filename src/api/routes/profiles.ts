// User profiles over HTTP, for `homeclaw profile set|show` and for household dashboards.
import type { FastifyInstance } from 'fastify';
import type { ProfileStore } from '../../conversation/resolver-api.js';
import type { JsonValue } from '../../protocol/types.js';
import { sendError } from '../errors.js';

export interface ProfileRoutesDeps {
  profiles: ProfileStore;
}

const USER_ID = /^[A-Za-z0-9_.@-]{1,128}$/;
const KEY = /^[A-Za-z0-9_.-]{1,64}$/;

export function registerProfileRoutes(app: FastifyInstance, deps: ProfileRoutesDeps): void {
  app.get<{ Params: { user: string } }>('/api/profiles/:user', async (request, reply) => {
    const { user } = request.params;
    if (!USER_ID.test(user)) return sendError(reply, 400, `invalid user id "${user}"`);
    return { user_id: user, profile: deps.profiles.get(user) };
  });

  /** Body: { set?: {key: value}, unset?: [key] }. */
  app.post<{ Params: { user: string } }>('/api/profiles/:user', async (request, reply) => {
    const { user } = request.params;
    if (!USER_ID.test(user)) return sendError(reply, 400, `invalid user id "${user}"`);
    const body = (request.body ?? {}) as { set?: unknown; unset?: unknown };
    const problems: { path: string; message: string }[] = [];
    const set = body.set ?? {};
    if (set === null || typeof set !== 'object' || Array.isArray(set)) problems.push({ path: '/set', message: 'set must be an object of key: value' });
    else for (const key of Object.keys(set)) if (!KEY.test(key)) problems.push({ path: `/set/${key}`, message: 'invalid profile key' });
    const unset = body.unset ?? [];
    if (!Array.isArray(unset) || unset.some((k) => typeof k !== 'string')) problems.push({ path: '/unset', message: 'unset must be an array of keys' });
    if (problems.length > 0) return sendError(reply, 400, 'invalid profile update', problems);
    const values = set as Record<string, JsonValue>;
    if (Object.keys(values).length > 0) deps.profiles.set(user, values);
    const profile = (unset as string[]).length > 0 ? deps.profiles.unset(user, unset as string[]) : deps.profiles.get(user);
    request.log.info({ user_id: user, keys: Object.keys(values), unset }, 'profile updated');
    return { user_id: user, profile };
  });
}

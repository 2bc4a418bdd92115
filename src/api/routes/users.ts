// Per-user HTTP tokens over HTTP (admin only): `homeclaw users add|list|remove|rotate` call these.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { UserTokenError, type UserTokenStore } from '../../access/user-tokens.js';
import { sendError } from '../errors.js';
import { validatedRoute } from '../route-validation.js';
import { UserParams, UserRequest } from './users-schema.js';

export interface UserRoutesDeps {
  users: UserTokenStore;
}

function answerError(reply: FastifyReply, err: unknown): FastifyReply {
  if (err instanceof UserTokenError) return sendError(reply, err.status, err.message);
  throw err;
}

export function registerUserRoutes(app: FastifyInstance, deps: UserRoutesDeps): void {
  app.get('/api/users', async () => ({ users: deps.users.list() }));

  app.post<{ Body: UserRequest }>('/api/users', validatedRoute({ body: UserRequest }, 'invalid user id'), async (request, reply) => {
    const body = request.body;
    try {
      const created = deps.users.add(body.user_id);
      request.log.info({ user_id: created.user_id }, 'user token created');
      return reply.code(201).send(created);
    } catch (err) {
      return answerError(reply, err);
    }
  });

  const byUser = validatedRoute({ params: UserParams }, 'invalid user id');
  app.delete<{ Params: UserParams }>('/api/users/:user', byUser, async (request, reply) => {
    try {
      deps.users.remove(request.params.user);
      request.log.warn({ user_id: request.params.user }, 'user token removed');
      return { user_id: request.params.user, removed: true };
    } catch (err) {
      return answerError(reply, err);
    }
  });

  app.post<{ Params: UserParams }>('/api/users/:user/rotate', byUser, async (request, reply) => {
    try {
      const rotated = deps.users.rotate(request.params.user);
      request.log.warn({ user_id: rotated.user_id }, 'user token rotated');
      return rotated;
    } catch (err) {
      return answerError(reply, err);
    }
  });
}

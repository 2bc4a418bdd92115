// Per-user HTTP tokens over HTTP (admin only): `homeclaw users add|list|remove|rotate` call these.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { UserTokenError, type UserTokenStore } from '../../access/user-tokens.js';
import { sendError } from '../errors.js';
import { isPlainObject } from '../../kit/plain-object.js';

export interface UserRoutesDeps {
  users: UserTokenStore;
}

function answerError(reply: FastifyReply, err: unknown): FastifyReply {
  if (err instanceof UserTokenError) return sendError(reply, err.status, err.message);
  throw err;
}

export function registerUserRoutes(app: FastifyInstance, deps: UserRoutesDeps): void {
  app.get('/api/users', async () => ({ users: deps.users.list() }));

  app.post('/api/users', async (request, reply) => {
    const body = request.body as { user_id?: unknown } | null;
    if (!isPlainObject(body)) return sendError(reply, 400, 'the body must be {"user_id": "<id>"}');
    const unknown = Object.keys(body).filter((key) => key !== 'user_id');
    if (unknown.length > 0)
      return sendError(
        reply,
        400,
        `unknown field "${unknown[0]}"`,
        unknown.map((key) => ({ path: `/${key}`, message: `unknown field "${key}"` })),
      );
    try {
      const created = deps.users.add(body.user_id);
      request.log.info({ user_id: created.user_id }, 'user token created');
      return reply.code(201).send(created);
    } catch (err) {
      return answerError(reply, err);
    }
  });

  app.delete<{ Params: { user: string } }>('/api/users/:user', async (request, reply) => {
    try {
      deps.users.remove(request.params.user);
      request.log.warn({ user_id: request.params.user }, 'user token removed');
      return { user_id: request.params.user, removed: true };
    } catch (err) {
      return answerError(reply, err);
    }
  });

  app.post<{ Params: { user: string } }>('/api/users/:user/rotate', async (request, reply) => {
    try {
      const rotated = deps.users.rotate(request.params.user);
      request.log.warn({ user_id: rotated.user_id }, 'user token rotated');
      return rotated;
    } catch (err) {
      return answerError(reply, err);
    }
  });
}

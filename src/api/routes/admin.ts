// Administration over HTTP: MQTT credentials. The CLI's `homeclaw credentials add|list|remove|rotate`
// calls this.
import type { FastifyInstance } from 'fastify';
import type { CredentialStore } from '../../bus/credentials.js';
import { sendError } from '../errors.js';
import { validatedRoute } from '../route-validation.js';
import { CredentialParams, CredentialRequest } from './admin-schema.js';

export interface AdminRoutesDeps {
  credentials: CredentialStore;
  /** Closes the live MQTT sessions of a login (embedded broker); returns how many. */
  disconnectSessions?: (username: string) => number;
}

export function registerAdminRoutes(app: FastifyInstance, deps: AdminRoutesDeps): void {
  app.get('/api/credentials', async () => ({ credentials: deps.credentials.list() }));

  app.post<{ Body: CredentialRequest }>(
    '/api/credentials',
    validatedRoute({ body: CredentialRequest }, 'invalid credential request'),
    async (request, reply) => {
      const body = request.body;
      try {
        const created = await deps.credentials.add(body.name, body.role, {
          ...(body.plugin_ids ? { plugin_ids: body.plugin_ids } : {}),
          ...(body.channels ? { channels: body.channels } : {}),
          ...(body.users ? { users: body.users } : {}),
        });
        request.log.info({ name: created.name, role: body.role }, 'MQTT credential created');
        return reply.code(201).send(created);
      } catch (err) {
        if ((err as { code?: string }).code === 'DISK_FULL') throw err;
        return sendError(reply, 400, (err as Error).message);
      }
    },
  );

  const byName = validatedRoute({ params: CredentialParams }, 'invalid credential name');
  app.delete<{ Params: CredentialParams }>('/api/credentials/:name', byName, async (request, reply) => {
    const { name } = request.params;
    if (!deps.credentials.remove(name)) return sendError(reply, 404, `no credential "${name}"`);
    const disconnected = deps.disconnectSessions?.(name) ?? 0;
    request.log.warn({ name, disconnected }, 'MQTT credential removed');
    return { name, removed: true, disconnected };
  });

  app.post<{ Params: CredentialParams }>('/api/credentials/:name/rotate', byName, async (request, reply) => {
    const { name } = request.params;
    const rotated = await deps.credentials.rotate(name);
    if (!rotated) return sendError(reply, 404, `no credential "${name}"`);
    // A session that logged in with the old password is exactly what a rotation must end.
    const disconnected = deps.disconnectSessions?.(name) ?? 0;
    request.log.warn({ name, disconnected }, 'MQTT credential rotated');
    return { ...rotated, disconnected };
  });
}

// Administration over HTTP: MQTT credentials. The CLI's `homeclaw credentials add|list|remove|rotate`
// calls this.
import type { FastifyInstance } from 'fastify';
import { CREDENTIAL_ROLES, type CredentialRole, type CredentialStore } from '../../bus/credentials.js';
import { explainBadId, PLUGIN_ID_PATTERN } from '../../protocol/ids.js';
import type { ValidationIssue } from '../../protocol/types.js';
import { sendError } from '../errors.js';

export interface AdminRoutesDeps {
  credentials: CredentialStore;
  /** Closes the live MQTT sessions of a login (embedded broker); returns how many. */
  disconnectSessions?: (username: string) => number;
}

export function registerAdminRoutes(app: FastifyInstance, deps: AdminRoutesDeps): void {
  app.get('/api/credentials', async () => ({ credentials: deps.credentials.list() }));

  app.post('/api/credentials', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const problems: ValidationIssue[] = [];
    if (typeof body.name !== 'string' || body.name === '') problems.push({ path: '/name', message: 'name is required' });
    if (typeof body.role !== 'string' || !CREDENTIAL_ROLES.includes(body.role as CredentialRole)) {
      problems.push({ path: '/role', message: `role must be one of ${CREDENTIAL_ROLES.join(', ')}` });
    }
    for (const key of ['plugin_ids', 'channels', 'users'] as const) {
      const v = body[key];
      if (v !== undefined && (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))) {
        problems.push({ path: `/${key}`, message: `${key} must be an array of strings` });
      }
    }
    if (problems.length > 0) return sendError(reply, 400, 'invalid credential request', problems);
    try {
      const created = await deps.credentials.add(body.name as string, body.role as CredentialRole, {
        ...(Array.isArray(body.plugin_ids) ? { plugin_ids: body.plugin_ids as string[] } : {}),
        ...(Array.isArray(body.channels) ? { channels: body.channels as string[] } : {}),
        ...(Array.isArray(body.users) ? { users: body.users as string[] } : {}),
      });
      request.log.info({ name: created.name, role: body.role }, 'MQTT credential created');
      return reply.code(201).send(created);
    } catch (err) {
      if ((err as { code?: string }).code === 'DISK_FULL') throw err;
      return sendError(reply, 400, (err as Error).message);
    }
  });

  app.delete<{ Params: { name: string } }>('/api/credentials/:name', async (request, reply) => {
    const { name } = request.params;
    if (!PLUGIN_ID_PATTERN.test(name)) return sendError(reply, 400, explainBadId(name, 'credential name'));
    if (!deps.credentials.remove(name)) return sendError(reply, 404, `no credential "${name}"`);
    const disconnected = deps.disconnectSessions?.(name) ?? 0;
    request.log.warn({ name, disconnected }, 'MQTT credential removed');
    return { name, removed: true, disconnected };
  });

  app.post<{ Params: { name: string } }>('/api/credentials/:name/rotate', async (request, reply) => {
    const { name } = request.params;
    if (!PLUGIN_ID_PATTERN.test(name)) return sendError(reply, 400, explainBadId(name, 'credential name'));
    const rotated = await deps.credentials.rotate(name);
    if (!rotated) return sendError(reply, 404, `no credential "${name}"`);
    // A session that logged in with the old password is exactly what a rotation must end.
    const disconnected = deps.disconnectSessions?.(name) ?? 0;
    request.log.warn({ name, disconnected }, 'MQTT credential rotated');
    return { ...rotated, disconnected };
  });
}

// Administration over HTTP: MQTT credentials. The CLI's `homeclaw credentials add` calls this.
import type { FastifyInstance } from 'fastify';
import { CREDENTIAL_ROLES, type CredentialRole, type CredentialStore } from '../../bus/credentials.js';
import type { ValidationIssue } from '../../protocol/types.js';
import { sendError } from '../errors.js';

export interface AdminRoutesDeps {
  credentials: CredentialStore;
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
    for (const key of ['plugin_ids', 'channels'] as const) {
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
      });
      request.log.info({ name: created.name, role: body.role }, 'MQTT credential created');
      return reply.code(201).send(created);
    } catch (err) {
      return sendError(reply, 400, (err as Error).message);
    }
  });
}

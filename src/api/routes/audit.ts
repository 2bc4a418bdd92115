// GET /api/audit (admin only): the audit log, newest first, filtered by user, plugin, channel, outcome
// and time (since/until: "1h", "7d", an ISO date or epoch ms), at most `limit` entries (default 100).
// GET /api/audit/last (admin only): the newest entry of each plugin (a dashboard's "last outcome").
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { MAX_AUDIT_QUERY_LIMIT, type AuditLog, type AuditQuery } from '../../access/audit-log.js';
import { parsePointInTime } from '../../access/time-window.js';
import { listProblems, validatedRoute } from '../route-validation.js';

export interface AuditRoutesDeps {
  audit: AuditLog;
}

const filter = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 256, description }));
const pointInTime = (description: string) =>
  Type.Optional(
    Type.String({ format: 'point-in-time', description: `${description} A duration ago (30m, 1h, 7d), an ISO date or date-time, or epoch milliseconds.` }),
  );

/** The query string of GET /api/audit: it validates the request and is what the OpenAPI document shows. */
export const AuditQueryString = Type.Object(
  {
    user: filter('Only this user.'),
    plugin: filter('Only this plugin.'),
    channel: filter('Only this channel.'),
    outcome: filter('Only this outcome.'),
    since: pointInTime('From.'),
    until: pointInTime('Until.'),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_AUDIT_QUERY_LIMIT, description: `At most this many entries (1-${MAX_AUDIT_QUERY_LIMIT}, default 100).` }),
    ),
  },
  { additionalProperties: false },
);
export type AuditQueryString = Static<typeof AuditQueryString>;

/** The filter a validated query string describes; since and until become epoch milliseconds. */
export function auditFilter(query: AuditQueryString, now = Date.now()): AuditQuery {
  const { since, until, ...rest } = query;
  const value: AuditQuery = { ...rest };
  const at = (text: string): number => {
    const parsed = parsePointInTime(text, now);
    // The schema's point-in-time format accepted it already.
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.ms;
  };
  if (since !== undefined) value.since = at(since);
  if (until !== undefined) value.until = at(until);
  return value;
}

export function registerAuditRoutes(app: FastifyInstance, deps: AuditRoutesDeps): void {
  const route = validatedRoute({ querystring: AuditQueryString }, { querystring: listProblems });
  app.get<{ Querystring: AuditQueryString }>('/api/audit', route, async (request) => {
    const query = auditFilter(request.query);
    // Entries still in the write buffer belong to the answer.
    await deps.audit.flush();
    const entries = deps.audit.query(query);
    return { entries, count: entries.length };
  });

  app.get('/api/audit/last', async () => {
    await deps.audit.flush();
    const entries = deps.audit.lastPerPlugin();
    return { entries, count: entries.length };
  });
}

// GET /api/audit (admin only): the audit log, newest first, filtered by user, plugin, channel, outcome
// and time (since/until: "1h", "7d", an ISO date or epoch ms), at most `limit` entries (default 100).
// GET /api/audit/last (admin only): the newest entry of each plugin (a dashboard's "last outcome").
import type { FastifyInstance } from 'fastify';
import { MAX_AUDIT_QUERY_LIMIT, type AuditLog, type AuditQuery } from '../../access/audit-log.js';
import { parsePointInTime } from '../../access/time-window.js';
import type { ValidationIssue } from '../../protocol/types.js';
import { sendError } from '../errors.js';

export interface AuditRoutesDeps {
  audit: AuditLog;
}

const TEXT_FILTERS = ['user', 'plugin', 'channel', 'outcome'] as const;
const KNOWN = new Set<string>([...TEXT_FILTERS, 'since', 'until', 'limit']);

/** Every problem of the query string at once, or the filter it describes. */
export function parseAuditQuery(query: Record<string, unknown>, now = Date.now()): { ok: true; value: AuditQuery } | { ok: false; errors: ValidationIssue[] } {
  const errors: ValidationIssue[] = [];
  const value: AuditQuery = {};
  for (const key of Object.keys(query)) {
    if (!KNOWN.has(key)) errors.push({ path: `/${key}`, message: `unknown filter "${key}"; use ${[...KNOWN].join(', ')}` });
    else if (Array.isArray(query[key])) errors.push({ path: `/${key}`, message: `give ${key} once` });
  }
  for (const key of TEXT_FILTERS) {
    const raw = query[key];
    if (raw === undefined || Array.isArray(raw)) continue;
    if (typeof raw !== 'string' || raw === '' || raw.length > 256)
      errors.push({ path: `/${key}`, message: `${key} must be a non-empty string of at most 256 characters` });
    else value[key] = raw;
  }
  for (const key of ['since', 'until'] as const) {
    const raw = query[key];
    if (raw === undefined || Array.isArray(raw)) continue;
    const parsed = parsePointInTime(String(raw), now);
    if (parsed.ok) value[key] = parsed.ms;
    else errors.push({ path: `/${key}`, message: `${key}: ${parsed.error}` });
  }
  const limit = query.limit;
  if (limit !== undefined && !Array.isArray(limit)) {
    const n = typeof limit === 'string' && /^\d{1,6}$/.test(limit) ? Number(limit) : NaN;
    if (!Number.isInteger(n) || n < 1 || n > MAX_AUDIT_QUERY_LIMIT)
      errors.push({ path: '/limit', message: `limit must be a whole number from 1 to ${MAX_AUDIT_QUERY_LIMIT}` });
    else value.limit = n;
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value };
}

export function registerAuditRoutes(app: FastifyInstance, deps: AuditRoutesDeps): void {
  app.get('/api/audit', async (request, reply) => {
    const parsed = parseAuditQuery((request.query ?? {}) as Record<string, unknown>);
    if (!parsed.ok) return sendError(reply, 400, parsed.errors.map((e) => e.message).join('; '), parsed.errors);
    // Entries still in the write buffer belong to the answer.
    await deps.audit.flush();
    const entries = deps.audit.query(parsed.value);
    return { entries, count: entries.length };
  });

  app.get('/api/audit/last', async () => {
    await deps.audit.flush();
    const entries = deps.audit.lastPerPlugin();
    return { entries, count: entries.length };
  });
}

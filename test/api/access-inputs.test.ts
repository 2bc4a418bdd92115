// The small parsers at the access front doors: the confirmation flag of direct invokes and the audit
// query string. Bad input is an error naming the field, never silently ignored.
import { describe, expect, it } from 'vitest';
import { readConfirmation } from '../../src/api/confirmation-flag.js';
import Fastify from 'fastify';
import type { AuditLog } from '../../src/access/audit-log.js';
import { auditFilter, registerAuditRoutes } from '../../src/api/routes/audit.js';
import type { CapabilitySpec } from '../../src/protocol/types.js';

const capability = (parameters: string[] = []): Pick<CapabilitySpec, 'parameters'> => ({
  parameters: parameters.map((name) => ({ name, type: 'boolean', required: false })),
});

describe('readConfirmation', () => {
  it('takes "confirmed" out of the body, or from the query', () => {
    expect(readConfirmation({ door: 'front', confirmed: true }, {}, capability())).toEqual({ ok: true, confirmed: true, parameters: { door: 'front' } });
    expect(readConfirmation({ door: 'front' }, { confirmed: 'true' }, capability())).toEqual({ ok: true, confirmed: true, parameters: { door: 'front' } });
    expect(readConfirmation({ door: 'front' }, { confirmed: '0' }, capability())).toEqual({ ok: true, confirmed: false, parameters: { door: 'front' } });
    expect(readConfirmation({}, {}, undefined)).toEqual({ ok: true, confirmed: false, parameters: {} });
  });

  it('leaves a parameter named "confirmed" to the capability (confirm with the query then)', () => {
    expect(readConfirmation({ confirmed: false }, {}, capability(['confirmed']))).toEqual({ ok: true, confirmed: false, parameters: { confirmed: false } });
    expect(readConfirmation({ confirmed: false }, { confirmed: '1' }, capability(['confirmed']))).toMatchObject({
      confirmed: true,
      parameters: { confirmed: false },
    });
  });

  it('refuses a flag that is not a boolean', () => {
    expect(readConfirmation({ confirmed: 'yes' }, {}, capability())).toEqual({
      ok: false,
      path: '/confirmed',
      error: '"confirmed" must be true or false, got "yes"',
    });
    expect(readConfirmation({}, { confirmed: 'maybe' }, capability())).toEqual({
      ok: false,
      path: '/confirmed',
      error: 'confirmed must be true or false, got "maybe"',
    });
    expect(readConfirmation({}, { confirmed: ['true', 'true'] }, capability()).ok).toBe(false);
  });
});

describe('GET /api/audit query string', () => {
  const now = Date.UTC(2026, 10, 26, 12);

  it('reads every filter', () => {
    expect(
      auditFilter({ user: 'kid', plugin: 'lock', channel: 'home', outcome: 'forbidden', since: '1h', until: '2026-11-26T12:00:00Z', limit: 5 }, now),
    ).toEqual({ user: 'kid', plugin: 'lock', channel: 'home', outcome: 'forbidden', since: now - 3_600_000, until: now, limit: 5 });
    expect(auditFilter({}, now)).toEqual({});
  });

  it('lists every problem at once', async () => {
    const app = Fastify();
    const queried: unknown[] = [];
    const audit = {
      flush: async () => {},
      query: (q: unknown) => {
        queried.push(q);
        return [];
      },
      lastPerPlugin: () => [],
    } as unknown as AuditLog;
    registerAuditRoutes(app, { audit });
    const res = await app.inject({ method: 'GET', url: '/api/audit?user=&since=soon&limit=0&colour=red&plugin=a&plugin=b' });
    expect(res.statusCode).toBe(400);
    const body = res.json() as { message: string; problems: { path: string; message: string }[] };
    expect(body.problems.map((e) => e.path).sort()).toEqual(['/colour', '/limit', '/plugin', '/since', '/user']);
    expect(body.problems).toContainEqual({ path: '/limit', message: 'limit must be a whole number between 1 and 10000, got 0' });
    expect(body.problems).toContainEqual({ path: '/plugin', message: 'give plugin once' });
    expect(body.message).toContain('unknown parameter "colour"; use user, plugin, channel, outcome, since, until, limit');
    expect(queried).toEqual([]);
    const good = await app.inject({ method: 'GET', url: '/api/audit?limit=5&user=kid' });
    expect(good.statusCode).toBe(200);
    expect(queried).toEqual([{ limit: 5, user: 'kid' }]);
    await app.close();
  });
});

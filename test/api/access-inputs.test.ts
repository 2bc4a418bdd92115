// The small parsers at the access front doors: the confirmation flag of direct invokes and the audit
// query string. Bad input is an error naming the field, never silently ignored.
import { describe, expect, it } from 'vitest';
import { readConfirmation } from '../../src/api/confirmation-flag.js';
import { parseAuditQuery } from '../../src/api/routes/audit.js';
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

describe('parseAuditQuery', () => {
  const now = Date.UTC(2026, 10, 26, 12);

  it('reads every filter', () => {
    expect(
      parseAuditQuery({ user: 'kid', plugin: 'lock', channel: 'home', outcome: 'forbidden', since: '1h', until: '2026-11-26T12:00:00Z', limit: '5' }, now),
    ).toEqual({
      ok: true,
      value: { user: 'kid', plugin: 'lock', channel: 'home', outcome: 'forbidden', since: now - 3_600_000, until: now, limit: 5 },
    });
    expect(parseAuditQuery({}, now)).toEqual({ ok: true, value: {} });
  });

  it('lists every problem at once', () => {
    const parsed = parseAuditQuery({ user: '', since: 'soon', limit: '0', colour: 'red', plugin: ['a', 'b'] }, now);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.errors.map((e) => e.path).sort()).toEqual(['/colour', '/limit', '/plugin', '/since', '/user']);
  });
});

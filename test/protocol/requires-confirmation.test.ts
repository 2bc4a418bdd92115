// requires_confirmation in every dialect: kept when true, dropped when false (absent and false mean the
// same), an error with its path when it is not a boolean; the canonical schema accepts the result.
import { describe, expect, it } from 'vitest';
import { normalizeDescriptor } from '../../src/protocol/descriptor/normalize.js';
import { getSchemaValidator } from '../../src/protocol/schemas.js';

const options = { source: 'external', default_type: 'mqtt' } as const;

describe('requires_confirmation', () => {
  it('HomeClaw: kept when true, dropped when false', () => {
    const outcome = normalizeDescriptor(
      {
        id: 'lock',
        name: 'Lock',
        description: 'Door lock.',
        capabilities: [
          { id: 'unlock', name: 'Unlock', description: 'Unlock.', parameters: [], requires_confirmation: true },
          { id: 'status', name: 'Status', description: 'Status.', parameters: [], requires_confirmation: false },
        ],
      },
      options,
    );
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.descriptor.capabilities.map((c) => c.requires_confirmation)).toEqual([true, undefined]);
    expect(getSchemaValidator('descriptor')(outcome.descriptor)).toBe(true);
  });

  it('ForgeSyte tools and RAGFlow metadata carry it too', () => {
    const forge = normalizeDescriptor(
      {
        name: 'vault',
        description: 'Secrets.',
        tools: { wipe: { description: 'Wipe all.', input_schema: { type: 'object', properties: {} }, requires_confirmation: true } },
      },
      options,
    );
    expect(forge.ok && forge.descriptor.capabilities[0]?.requires_confirmation).toBe(true);
    const ragflow = normalizeDescriptor(
      { name: 'shop', description: 'Buy things.', parameters: { item: { type: 'string', description: 'What', required: true } }, requires_confirmation: true },
      options,
    );
    expect(ragflow.ok && ragflow.descriptor.capabilities[0]?.requires_confirmation).toBe(true);
  });

  it('a non-boolean is an error with its path', () => {
    const outcome = normalizeDescriptor(
      {
        id: 'lock',
        name: 'Lock',
        description: 'Door lock.',
        capabilities: [{ id: 'unlock', name: 'Unlock', description: 'Unlock.', parameters: [], requires_confirmation: 'yes' }],
      },
      options,
    );
    expect(outcome.ok).toBe(false);
    if (outcome.ok) return;
    expect(outcome.errors.map((e) => e.path)).toContain('/capabilities/0/requires_confirmation');
  });
});

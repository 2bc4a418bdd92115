import { describe, expect, it } from 'vitest';
import { coerceToSchema, ValueCoercer } from '../../src/conversation/coerce.js';
import type { CapabilitySpec, JsonObject, JsonValue } from '../../src/protocol/types.js';

describe('coerceToSchema', () => {
  const cases: [string, JsonValue, JsonObject, { value: JsonValue } | { reason: string }][] = [
    ['number from text', '42', { type: 'number' }, { value: 42 }],
    ['negative decimal', ' -3.5 ', { type: 'number' }, { value: -3.5 }],
    ['number stays number', 7, { type: 'number' }, { value: 7 }],
    ['not a number', 'abc', { type: 'number' }, { reason: 'must be a number' }],
    ['empty is not a number', '', { type: 'number' }, { reason: 'must be a number' }],
    ['integer from text', '12', { type: 'integer' }, { value: 12 }],
    ['fraction for integer', '1.5', { type: 'integer' }, { reason: 'must be a whole number' }],
    ['boolean true words', 'Yes', { type: 'boolean' }, { value: true }],
    ['boolean "true"', 'true', { type: 'boolean' }, { value: true }],
    ['boolean false words', 'no', { type: 'boolean' }, { value: false }],
    ['boolean from 0', 0, { type: 'boolean' }, { value: false }],
    ['boolean refuses maybe', 'maybe', { type: 'boolean' }, { reason: 'must be yes or no (true/false)' }],
    ['string trimmed', '  milk ', { type: 'string' }, { value: 'milk' }],
    ['string from number', 5550000, { type: 'string' }, { value: '5550000' }],
    ['string refuses object', { a: 1 }, { type: 'string' }, { reason: 'must be text' }],
    ['object from JSON text', '{"a": [1]}', { type: 'object' }, { value: { a: [1] } }],
    ['object refuses array text', '[1]', { type: 'object' }, { reason: 'must be a JSON object (e.g. {"key": "value"})' }],
    ['array from JSON text', '[1, 2]', { type: 'array', items: { type: 'integer' } }, { value: [1, 2] }],
    ['array from comma list', 'milk, bread', { type: 'array', items: { type: 'string' } }, { value: ['milk', 'bread'] }],
    ['array items coerced', '1, 2', { type: 'array', items: { type: 'number' } }, { value: [1, 2] }],
    ['array bad item', '1, x', { type: 'array', items: { type: 'number' } }, { reason: 'item 2 must be a number' }],
    ['broken JSON array', '[1,', { type: 'array' }, { reason: 'must be a list (e.g. ["a", "b"] or a, b)' }],
    ['enum case-insensitive', 'CARD', { type: 'string', enum: ['card', 'cash'] }, { value: 'card' }],
    ['enum refused', 'bitcoin', { type: 'string', enum: ['card', 'cash'] }, { reason: 'must be one of: "card", "cash"' }],
    ['numeric enum from text', '2', { type: 'integer', enum: [1, 2] }, { value: 2 }],
    ['union type picks first that fits', '3', { type: ['integer', 'string'] }, { value: 3 }],
    ['no type accepts as is', 'x', {}, { value: 'x' }],
  ];

  it.each(cases)('%s', (_label, value, schema, expected) => {
    const result = coerceToSchema(value, schema);
    if ('value' in expected) expect(result).toEqual({ ok: true, value: expected.value });
    else expect(result).toEqual({ ok: false, reason: expected.reason });
  });
});

describe('ValueCoercer', () => {
  const capability: CapabilitySpec = {
    id: 'c',
    name: 'C',
    description: 'd',
    post_process: false,
    parameters: [
      { name: 'qty', type: 'integer', required: true },
      { name: 'email', type: 'string', required: false },
    ],
    // A full JSON Schema (as MCP/ForgeSyte give) wins and its extra keywords are enforced by ajv.
    input_schema: {
      type: 'object',
      properties: {
        qty: { type: 'integer', minimum: 1, maximum: 10 },
        email: { type: 'string', format: 'email' },
      },
    },
  };
  const coercer = new ValueCoercer();

  it('enforces schema keywords beyond the type after coercion', () => {
    expect(coercer.coerce(capability, 'qty', '5')).toEqual({ ok: true, value: 5 });
    expect(coercer.coerce(capability, 'qty', '50')).toEqual({ ok: false, reason: 'must be <= 10' });
    expect(coercer.coerce(capability, 'email', 'a@b.example')).toEqual({ ok: true, value: 'a@b.example' });
    expect(coercer.coerce(capability, 'email', 'nope')).toEqual({ ok: false, reason: 'must match format "email"' });
  });

  it('refuses names the capability does not have', () => {
    expect(coercer.coerce(capability, 'other', 1)).toEqual({ ok: false, reason: 'is not a parameter of this capability' });
  });

  it('uses the parameter list when the capability has no full schema', () => {
    const plain: CapabilitySpec = { ...capability, input_schema: undefined };
    expect(coercer.coerce(plain, 'qty', '50')).toEqual({ ok: true, value: 50 });
    expect(coercer.coerce(plain, 'qty', 'x')).toEqual({ ok: false, reason: 'must be a whole number' });
  });
});

// The "try it" form's model: a capability's JSON Schema as fields, and the typed text back as parameters,
// with one clear problem per field.
import { describe, expect, it } from 'vitest';
import { capabilityInputSchema } from '../../src/protocol/descriptor/json-schema.js';
import type { CapabilitySpec } from '../../src/protocol/types.js';
import { collectParameters, formOf, optionText, parseField } from '../../web/src/schema-form/fields.js';

const CAPABILITY: CapabilitySpec = {
  id: 'set',
  name: 'Set',
  description: 'Set things.',
  post_process: false,
  parameters: [
    { name: 'celsius', type: 'number', required: true, description: 'Target.' },
    { name: 'count', type: 'integer', required: false, default: 2 },
    { name: 'on', type: 'boolean', required: true },
    { name: 'mode', type: 'string', required: false, enum: ['eco', 'comfort'] },
    { name: 'level', type: 'integer', required: false, enum: [1, 2, 3] },
    { name: 'rooms', type: 'array', required: false },
    { name: 'options', type: 'object', required: false },
    { name: 'note', type: 'string', required: false },
  ],
};

describe('formOf', () => {
  it("turns the Core's own capability schema into one field per parameter", () => {
    const form = formOf(capabilityInputSchema(CAPABILITY));
    expect(form.extra).toBe(false);
    expect(form.fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ['celsius', 'number', true],
      ['count', 'integer', false],
      ['on', 'boolean', true],
      ['mode', 'enum', false],
      ['level', 'enum', false],
      ['rooms', 'json', false],
      ['options', 'json', false],
      ['note', 'string', false],
    ]);
    expect(form.fields.find((f) => f.name === 'count')?.initial).toBe('2');
    expect(form.fields.find((f) => f.name === 'rooms')?.json).toBe('array');
    expect(form.fields.find((f) => f.name === 'celsius')?.description).toBe('Target.');
  });

  it('reads nullable types, limits, and schemas that take any object', () => {
    const form = formOf({ type: 'object', properties: { t: { type: ['number', 'null'], minimum: 5, maximum: 30 }, x: {} }, additionalProperties: true });
    expect(form.fields[0]).toMatchObject({ name: 't', kind: 'number', minimum: 5, maximum: 30, required: false });
    expect(form.fields[1]).toMatchObject({ name: 'x', kind: 'json', json: 'any' });
    expect(form.extra).toBe(true);
    expect(formOf({ type: 'object' })).toEqual({ fields: [], extra: true });
  });
});

describe('collectParameters', () => {
  const form = formOf(capabilityInputSchema(CAPABILITY));

  it('converts every field to its type and leaves out empty optional ones', () => {
    const collected = collectParameters(form, {
      celsius: '21.5',
      count: '',
      on: 'false',
      mode: optionText('eco'),
      level: optionText(2),
      rooms: '["kitchen"]',
      options: '{"fast": true}',
      note: '',
    });
    expect(collected).toEqual({ ok: true, parameters: { celsius: 21.5, on: false, mode: 'eco', level: 2, rooms: ['kitchen'], options: { fast: true } } });
  });

  it('uses the schema default when a field was never touched', () => {
    const collected = collectParameters(form, { celsius: '20', on: 'true' });
    expect(collected).toMatchObject({ ok: true, parameters: { celsius: 20, on: true, count: 2 } });
  });

  it('reports every problem at once, per field', () => {
    const collected = collectParameters(form, { celsius: 'warm', count: '2.5', on: '', rooms: '{"a":1}', options: '[', level: '"7"' });
    expect(collected).toEqual({
      ok: false,
      errors: {
        celsius: 'must be a number',
        count: 'must be a whole number',
        on: 'required',
        rooms: 'must be a JSON array, e.g. ["a", "b"]',
        options: 'is not valid JSON',
        level: 'pick one of the values',
      },
    });
  });

  it('checks limits and takes extra keys as a JSON object', () => {
    const limited = formOf({ type: 'object', properties: { t: { type: 'integer', minimum: 5, maximum: 30 } }, additionalProperties: true });
    expect(parseField(limited.fields[0]!, '4')).toEqual({ ok: false, error: 'must be at least 5' });
    expect(parseField(limited.fields[0]!, '31')).toEqual({ ok: false, error: 'must be at most 30' });
    expect(collectParameters(limited, { t: '10' }, '{"debug": true}')).toEqual({ ok: true, parameters: { debug: true, t: 10 } });
    expect(collectParameters(limited, { t: '10' }, '[1]')).toEqual({ ok: false, errors: { '*': 'must be a JSON object, e.g. {"key": "value"}' } });
  });
});

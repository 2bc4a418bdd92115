// The route validator and its wording: bodies are checked as sent (no coercion, no stripping, no
// defaults), query strings are coerced from text, and each Ajv error becomes a problem naming its field.
import type { ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { routeProblems, routeValidatorCompiler } from '../../src/api/route-validation.js';

const compile = (schema: object, httpPart: string) =>
  routeValidatorCompiler({ schema, httpPart, method: 'POST', url: '/x' }) as ((data: unknown) => boolean) & { errors?: ErrorObject[] };

function problems(schema: object, data: unknown, httpPart = 'body') {
  const validate = compile(schema, httpPart);
  if (validate(data)) return [];
  return routeProblems(validate.errors ?? [], httpPart);
}

const schema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 8 },
    on: { type: 'boolean', default: false },
    count: { type: 'integer', minimum: 1, maximum: 5 },
    level: { type: 'number', minimum: 0 },
    mode: { enum: ['a', 'b'] },
    code: { type: 'string', pattern: '^[a-z]+$' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
  },
};

describe('bodies are checked as sent', () => {
  it('neither coerces, strips nor fills in defaults', () => {
    const body: Record<string, unknown> = { name: 'x', extra: 1 };
    expect(problems(schema, body)).toEqual([{ path: '/extra', message: 'unknown field "extra"' }]);
    expect(body).toEqual({ name: 'x', extra: 1 });
    const valid: Record<string, unknown> = { name: 'x' };
    expect(problems(schema, valid)).toEqual([]);
    expect(valid).toEqual({ name: 'x' });
    expect(problems(schema, { name: 'x', on: 'true', count: '2' })).toEqual([
      { path: '/on', message: 'on must be a boolean, got "true"' },
      { path: '/count', message: 'count must be a whole number, got "2"' },
    ]);
  });

  it('words every rule with the field', () => {
    expect(problems(schema, {})).toEqual([{ path: '/name', message: 'name is required' }]);
    expect(problems(schema, [])).toEqual([{ path: '', message: 'the body must be an object' }]);
    expect(problems(schema, { name: '' })).toEqual([{ path: '/name', message: 'name must be a non-empty string' }]);
    expect(problems(schema, { name: 'x'.repeat(9) })).toEqual([{ path: '/name', message: 'name must be at most 8 characters' }]);
    expect(problems(schema, { name: 'x', count: 9 })).toEqual([{ path: '/count', message: 'count must be a whole number between 1 and 5, got 9' }]);
    expect(problems(schema, { name: 'x', level: -1 })).toEqual([{ path: '/level', message: 'level must be at least 0, got -1' }]);
    expect(problems(schema, { name: 'x', mode: 'c' })).toEqual([{ path: '/mode', message: 'mode must be one of a, b' }]);
    expect(problems(schema, { name: 'x', code: 'A1' })).toEqual([{ path: '/code', message: 'code must match ^[a-z]+$' }]);
    expect(problems(schema, { name: 'x', tags: [] })).toEqual([{ path: '/tags', message: 'tags must have at least 1 item' }]);
    expect(problems(schema, { name: 'x', tags: [1] })).toEqual([{ path: '/tags/0', message: 'tags/0 must be a string, got 1' }]);
  });

  it('lists every problem, one per field', () => {
    expect(problems(schema, { name: '', count: 0, mode: 'z', other: true }).map((p) => p.path)).toEqual(['/other', '/name', '/count', '/mode']);
  });
});

describe('query strings are text', () => {
  const query = { type: 'object', properties: { k: { type: 'integer', minimum: 1 }, on: { type: 'boolean' }, q: { type: 'string' } } };

  it('coerces numbers and booleans, refuses what is not one, and a repeated parameter', () => {
    const data: Record<string, unknown> = { k: '5', on: 'true' };
    expect(problems(query, data, 'querystring')).toEqual([]);
    expect(data).toEqual({ k: 5, on: true });
    expect(problems(query, { k: '1.5' }, 'querystring')).toEqual([{ path: '/k', message: 'k must be a whole number, got "1.5"' }]);
    expect(problems(query, { q: ['a', 'b'] }, 'querystring')).toEqual([{ path: '/q', message: 'give q once' }]);
  });

  it('names the known parameters when an unknown one is sent', () => {
    const closed = { ...query, additionalProperties: false };
    expect(problems(closed, { colour: 'red' }, 'querystring')).toEqual([{ path: '/colour', message: 'unknown parameter "colour"; use k, on, q' }]);
  });
});

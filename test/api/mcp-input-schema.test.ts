// Input schemas rewritten for Home Assistant's MCP client: each awkward JSON Schema form becomes the
// portable subset (checked with the converter rules in test/helpers/ha-schema-check.ts and Python's re),
// and the rewritten schema still accepts every value the original accepts (checked with ajv).
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { isPortablePattern, portableInputSchema } from '../../src/api/mcp-input-schema.js';
import type { JsonObject, JsonValue } from '../../src/protocol/types.js';
import { haSchemaReport, patternsPythonRejects } from '../helpers/ha-schema-check.js';

const ajv = new Ajv2020({ strict: false, validateFormats: false });

interface Case {
  name: string;
  schema: JsonObject;
  /** Values the original accepts: the portable schema must accept them too. */
  valid: JsonValue[];
  expected?: JsonObject;
}

const CASES: Case[] = [
  {
    name: '$ref into $defs (pydantic style) is inlined, $defs dropped',
    schema: {
      type: 'object',
      $defs: { Room: { type: 'string', enum: ['kitchen', 'hall'], description: 'A room' } },
      properties: { room: { $ref: '#/$defs/Room' }, rooms: { type: 'array', items: { $ref: '#/$defs/Room' } } },
      required: ['room'],
    },
    valid: [{ room: 'kitchen' }, { room: 'hall', rooms: ['kitchen'] }],
    expected: {
      type: 'object',
      properties: {
        room: { type: 'string', description: 'A room', enum: ['kitchen', 'hall'] },
        rooms: { type: 'array', items: { type: 'string', description: 'A room', enum: ['kitchen', 'hall'] } },
      },
      required: ['room'],
    },
  },
  {
    name: 'draft-07 definitions and a recursive reference (cut at the repeat)',
    schema: {
      type: 'object',
      definitions: { node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/definitions/node' } } } } },
      properties: { tree: { $ref: '#/definitions/node' } },
    },
    valid: [{ tree: { name: 'a', children: [{ name: 'b', children: [{ name: 'c' }] }] } }],
  },
  {
    name: 'anyOf with null (a nullable string) → type + nullable',
    schema: { type: 'object', properties: { note: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null, description: 'Optional note' } } },
    valid: [{ note: 'hi' }, { note: null }, {}],
    expected: {
      type: 'object',
      properties: { note: { type: 'string', description: 'Optional note', default: null, nullable: true } },
      additionalProperties: undefined as unknown as JsonValue,
    },
  },
  {
    name: 'type lists, integer folded into number, distinct types as a oneOf',
    schema: { type: 'object', properties: { level: { type: ['integer', 'null'] }, value: { type: ['string', 'number', 'integer'] } } },
    valid: [{ level: 3, value: 'x' }, { level: null, value: 2.5 }, { value: 7 }],
    expected: { type: 'object', properties: { level: { type: 'integer', nullable: true }, value: { oneOf: [{ type: 'string' }, { type: 'number' }] } } },
  },
  {
    name: 'properties without a type get one from their keywords, else string',
    schema: {
      type: 'object',
      properties: {
        anything: {},
        described: { description: 'free text' },
        count: { minimum: 1 },
        choice: { enum: [1, 2, 3] },
        fixed: { const: 'on' },
        mixed: { enum: ['auto', 5, null] },
        bag: { properties: { a: { type: 'string' } } },
        list: { items: { type: 'integer' } },
      },
    },
    valid: [{ anything: 'x', described: 'y', count: 2, choice: 3, fixed: 'on', mixed: 5, bag: { a: 'z' }, list: [1, 2] }, { mixed: null }, { mixed: 'auto' }],
  },
  {
    name: 'empty additionalProperties / propertyNames, open objects, patternProperties',
    schema: {
      type: 'object',
      properties: {
        meta: { type: 'object', additionalProperties: {} },
        labels: { type: 'object', propertyNames: {}, additionalProperties: { type: 'string' } },
        free: { type: 'object' },
        headers: { type: 'object', patternProperties: { '^x-': { type: 'string' } }, additionalProperties: false },
        strict: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false },
      },
      additionalProperties: false,
    },
    valid: [{ meta: { any: 1 }, labels: { a: 'b' }, free: { x: [1] }, headers: { 'x-a': 'b' }, strict: { a: 'c' } }],
  },
  {
    name: 'allOf parts merged; anyOf of objects merged with the keys every branch requires',
    schema: {
      type: 'object',
      properties: {
        target: { allOf: [{ type: 'object', properties: { id: { type: 'string' } }, required: ['id'] }, { properties: { area: { type: 'string' } } }] },
        light: {
          anyOf: [
            { type: 'object', properties: { name: { type: 'string' }, brightness: { type: 'integer', maximum: 100 } }, required: ['name', 'brightness'] },
            { type: 'object', properties: { name: { type: 'string' }, color: { type: 'string' } }, required: ['name', 'color'] },
          ],
        },
        either: { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, anyOf: [{ required: ['a'] }, { required: ['b'] }] },
      },
    },
    valid: [
      { target: { id: 'x', area: 'y' }, light: { name: 'l', brightness: 5 }, either: { a: 'x' } },
      { light: { name: 'l', color: 'red' }, either: { b: 'y' } },
    ],
  },
  {
    name: 'unsupported keywords dropped; exclusive bounds widened; tuple arrays merged; arrays get items',
    schema: {
      type: 'object',
      properties: {
        paths: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 5, uniqueItems: true },
        step: { type: 'number', multipleOf: 0.5, exclusiveMinimum: 0, exclusiveMaximum: 10 },
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] },
        anything: { type: 'array' },
      },
    },
    valid: [{ paths: ['a'], step: 1.5, pair: ['a', 1], anything: ['x'] }],
  },
  {
    name: 'patterns Python cannot read and date-time formats are dropped; portable patterns kept',
    schema: {
      type: 'object',
      properties: {
        code: { type: 'string', pattern: '^[A-Z]{2}\\d{3}$' },
        word: { type: 'string', pattern: '^\\p{L}+$' },
        named: { type: 'string', pattern: '^(?<year>\\d{4})-(?<month>\\d{2})$' },
        when: { type: 'string', format: 'date-time', description: 'When to start' },
        day: { type: 'string', format: 'date' },
      },
    },
    valid: [{ code: 'AB123', word: 'héllo', named: '2025-01', when: '2025-01-01T10:00:00+01:00', day: '2025-01-01' }],
  },
];

function portable(schema: JsonObject): JsonObject {
  return portableInputSchema(structuredClone(schema));
}

describe('portable MCP input schemas', () => {
  for (const { name, schema, valid, expected } of CASES) {
    it(`${name}: readable by every converter release, accepts what the original accepts`, async () => {
      const result = portable(schema);
      const report = haSchemaReport(result);
      expect(report.problems).toEqual([]);
      expect(await patternsPythonRejects(report.patterns)).toEqual([]);
      expect(JSON.stringify(result)).not.toMatch(/"\$ref"|"\$defs"|"definitions"|"anyOf"|"allOf"|"propertyNames"|"minItems"/);
      const original = ajv.compile(schema);
      const rewritten = ajv.compile(result);
      for (const value of valid) {
        expect(original(value), `original accepts ${JSON.stringify(value)}`).toBe(true);
        expect(rewritten(value), `portable accepts ${JSON.stringify(value)}: ${JSON.stringify(rewritten.errors)}`).toBe(true);
      }
      if (expected) expect(result).toEqual(JSON.parse(JSON.stringify(expected)));
    });
  }

  it('the checker finds what the original schemas break (it is not vacuous)', () => {
    const problems = CASES.flatMap(({ schema }) => haSchemaReport(schema).problems).join('\n');
    for (const rule of [
      '$ref',
      'anyOf',
      'allOf',
      'no type',
      'type is a list',
      'additionalProperties is a schema',
      'empty propertyNames',
      'minItems',
      'multipleOf',
      'array without items',
      'date-time',
    ]) {
      expect(problems).toContain(rule);
    }
  });

  it('details: required limited to known properties, false properties dropped, the top is always an object', () => {
    expect(portable({ type: 'object', properties: { a: { type: 'string' }, gone: false }, required: ['a', 'ghost', 'gone', 'a'] })).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    });
    expect(portable({ type: 'object' })).toEqual({ type: 'object', properties: {}, additionalProperties: true });
    // Draft-07 tuple arrays (items as a list) become one item schema accepting each position.
    expect(portable({ type: 'object', properties: { pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } } }).properties).toEqual({
      pair: { type: 'array', items: { oneOf: [{ type: 'string' }, { type: 'number' }] } },
    });
    expect(portable({ anyOf: [{ type: 'object', properties: { x: { type: 'string' } } }, { type: 'null' }] })).toEqual({
      type: 'object',
      properties: { x: { type: 'string' } },
    });
    expect(portable({ type: 'object', properties: { p: { $ref: '#/nowhere' }, q: { $ref: 'https://example.com/s.json' } } }).properties).toEqual({
      p: { type: 'object', properties: {}, additionalProperties: true },
      q: { type: 'object', properties: {}, additionalProperties: true },
    });
  });

  it('a reference graph that explodes when expanded stays bounded', () => {
    const defs: JsonObject = { d0: { type: 'string' } };
    for (let i = 1; i <= 30; i += 1) defs[`d${i}`] = { type: 'object', properties: { a: { $ref: `#/$defs/d${i - 1}` }, b: { $ref: `#/$defs/d${i - 1}` } } };
    const result = portable({ type: 'object', $defs: defs, properties: { root: { $ref: '#/$defs/d30' } } });
    expect(JSON.stringify(result).length).toBeLessThan(5_000_000);
    expect(haSchemaReport(result).problems).toEqual([]);
  });

  it('isPortablePattern agrees with Python on what Python can compile', async () => {
    const patterns = [
      '^a+$',
      '\\d{2,4}',
      '[\\w.-]+@\\w+',
      '^\\p{L}+$',
      '(?<n>a)',
      '(?<=a)b',
      '[^]',
      '\\cJ',
      '\\k<n>',
      '\\e',
      '\\u{41}',
      '\\x4',
      '\\u0041',
      '\\N',
    ];
    const rejectedByPython = new Set(await patternsPythonRejects(patterns));
    for (const pattern of patterns) {
      if (isPortablePattern(pattern)) expect(rejectedByPython.has(pattern), pattern).toBe(false);
    }
    expect(patterns.filter(isPortablePattern)).toEqual(['^a+$', '\\d{2,4}', '[\\w.-]+@\\w+', '\\u0041']);
  });
});

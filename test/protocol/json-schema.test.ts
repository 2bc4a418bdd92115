import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { capabilityInputSchema } from '../../src/protocol/descriptor/json-schema.js';
import { normalizeDescriptor } from '../../src/protocol/descriptor/normalize.js';
import type { CapabilitySpec, JsonObject } from '../../src/protocol/types.js';
import { fixture } from './fixtures.js';

function capabilityOf(name: string, index = 0): CapabilitySpec {
  const outcome = normalizeDescriptor(fixture(name), { source: 'built-in', default_type: 'inline' });
  if (!outcome.ok) throw new Error(JSON.stringify(outcome.errors));
  return outcome.descriptor.capabilities[index] as CapabilitySpec;
}

function check(schema: JsonObject, value: unknown): boolean {
  return new Ajv2020({ strict: true, allErrors: true }).compile(schema)(value);
}

describe('capabilityInputSchema', () => {
  it('compiles the weather parameters to a closed object schema', () => {
    const schema = capabilityInputSchema(capabilityOf('weather.plugin.yaml'));
    expect(schema).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string', description: 'City name, e.g. Beijing.' },
        district: { type: 'string', description: 'District within the city, e.g. Daxing.' },
      },
      required: ['city'],
      additionalProperties: false,
    });
    expect(check(schema, { city: 'Beijing' })).toBe(true);
    expect(check(schema, { city: 'Beijing', district: 'Daxing' })).toBe(true);
    expect(check(schema, { district: 'Daxing' })).toBe(false);
    expect(check(schema, { city: 3 })).toBe(false);
    expect(check(schema, { city: 'x', country: 'cn' })).toBe(false);
  });

  it('carries enum, default, items and properties', () => {
    const capability: CapabilitySpec = {
      id: 'c',
      name: 'c',
      description: 'd',
      post_process: false,
      parameters: [
        { name: 'unit', type: 'string', required: false, enum: ['C', 'F'], default: 'C' },
        { name: 'tags', type: 'array', required: true, items: { type: 'string' } },
        { name: 'point', type: 'object', required: false, properties: { x: { type: 'number' } } },
        { name: 'n', type: 'integer', required: true },
      ],
    };
    const schema = capabilityInputSchema(capability);
    expect(schema['properties']).toEqual({
      unit: { type: 'string', enum: ['C', 'F'], default: 'C' },
      tags: { type: 'array', items: { type: 'string' } },
      point: { type: 'object', properties: { x: { type: 'number' } } },
      n: { type: 'integer' },
    });
    expect(schema['required']).toEqual(['tags', 'n']);
    expect(check(schema, { tags: ['a'], n: 2, unit: 'F', point: { x: 1 } })).toBe(true);
    expect(check(schema, { tags: [1], n: 2 })).toBe(false);
    expect(check(schema, { tags: [], n: 2.5 })).toBe(false);
    expect(check(schema, { tags: [], n: 2, unit: 'K' })).toBe(false);
  });

  it('restricts to the LLM-visible parameters when asked (buy: only item)', () => {
    const capability = capabilityOf('buy.plugin.yaml');
    const visible = capability.parameters.filter((p) => p.name === 'item' || p.name === 'payment_method');
    const schema = capabilityInputSchema(capability, visible);
    expect(Object.keys(schema['properties'] as JsonObject)).toEqual(['item', 'payment_method']);
    expect(schema['required']).toEqual(['item']);
    expect(check(schema, { item: 'milk' })).toBe(true);
    expect(check(schema, { item: 'milk', address: 'x' })).toBe(false);
  });

  it('uses a kept full input_schema (ForgeSyte min/max), restricted the same way', () => {
    const ball = capabilityOf('yolo-tracker.forgesyte.json', 1);
    const schema = capabilityInputSchema(ball);
    expect(schema).toEqual(ball.input_schema);
    expect(schema).not.toBe(ball.input_schema);
    expect(check(schema, { frame_base64: 'AAAA', threshold: 0.7 })).toBe(true);
    expect(check(schema, { frame_base64: 'AAAA', threshold: 1.7 })).toBe(false);
    const onlyThreshold = capabilityInputSchema(
      ball,
      ball.parameters.filter((p) => p.name === 'threshold'),
    );
    expect(Object.keys(onlyThreshold['properties'] as JsonObject)).toEqual(['threshold']);
    expect(onlyThreshold['required']).toEqual([]);
  });

  it('gives the default run capability an optional user_input', () => {
    const schema = capabilityInputSchema(capabilityOf('mail.plugin.yaml'));
    expect(schema).toEqual({
      type: 'object',
      properties: { user_input: { type: 'string', description: "The user's request." } },
      required: [],
      additionalProperties: false,
    });
    expect(check(schema, {})).toBe(true);
  });
});

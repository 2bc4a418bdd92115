// A capability's parameters as the JSON Schema used twice: by ajv to validate a call's parameters, and
// as the LLM tool schema (restricted to the parameters the LLM should see).
import type { CapabilitySpec, JsonObject, ParameterSpec } from '../types.js';
import { isPlainObject } from '../../kit/plain-object.js';

/** The JSON Schema (draft 2020-12 subset, type object) for a capability's parameters. */
export function capabilityInputSchema(capability: CapabilitySpec, only?: ParameterSpec[]): JsonObject {
  const keep = only ? new Set(only.map((parameter) => parameter.name)) : undefined;
  if (capability.input_schema) return restrictSchema(capability.input_schema, keep);
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const parameter of capability.parameters) {
    if (keep && !keep.has(parameter.name)) continue;
    properties[parameter.name] = parameterSchema(parameter);
    if (parameter.required) required.push(parameter.name);
  }
  return { type: 'object', properties, required, additionalProperties: false };
}

export function parameterSchema(parameter: ParameterSpec): JsonObject {
  const schema: JsonObject = { type: parameter.type };
  if (parameter.description !== undefined) schema['description'] = parameter.description;
  if (parameter.enum !== undefined) schema['enum'] = structuredClone(parameter.enum);
  if (parameter.default !== undefined) schema['default'] = structuredClone(parameter.default);
  if (parameter.type === 'array' && parameter.items !== undefined) schema['items'] = structuredClone(parameter.items);
  if (parameter.type === 'object' && parameter.properties !== undefined) {
    schema['properties'] = structuredClone(parameter.properties);
  }
  return schema;
}

/** A copy of a full input schema limited to the kept properties (required list filtered to match). */
function restrictSchema(schema: JsonObject, keep: Set<string> | undefined): JsonObject {
  const copy = structuredClone(schema);
  // Descriptors stored before the normalizer dropped it may still carry a draft-07 tag, which the
  // 2020-12 validator refuses to compile; every schema here is read as 2020-12.
  delete copy['$schema'];
  if (!keep) return copy;
  const properties = copy['properties'];
  if (isPlainObject(properties)) {
    for (const name of Object.keys(properties)) if (!keep.has(name)) delete properties[name];
  }
  const required = copy['required'];
  if (Array.isArray(required)) copy['required'] = required.filter((name) => typeof name === 'string' && keep.has(name));
  return copy;
}

// ForgeSyte's input_schema is "JSON-schema-like": either a bare map of properties
// ({frame_base64: {type: string}, threshold: {type: number, default: 0.5, min: 0, max: 1}}) or a full
// {type: object, properties, required} schema (MCP inputSchema looks like this too). Both become a
// parameter list; when the list cannot carry everything the schema says, the full schema is kept in
// capability.input_schema and validation uses it.
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { JsonObject, JsonValue, ParameterSpec, ParameterType } from '../types.js';
import { type IssueList, at, describe, isJsonValue, toJsonObject } from './issues.js';
import { explainBadParameterName, isParameterName } from './name-patterns.js';
import { readParameterType } from './parameters.js';
import { errorMessage } from '../../kit/error-message.js';
import { isPlainObject } from '../../kit/plain-object.js';

/** Property keywords a ParameterSpec carries without loss. */
const LOSSLESS_PROPERTY_KEYS = new Set(['type', 'description', 'default', 'enum', 'items', 'properties']);
const LOSSLESS_OBJECT_KEYS = new Set(['type', 'properties', 'required', 'additionalProperties', '$schema', 'title', 'description']);

/** Non-standard bounds seen in loose metadata, by the type they constrain. */
const LOOSE_BOUNDS: Record<string, { min: string; max: string }> = {
  number: { min: 'minimum', max: 'maximum' },
  integer: { min: 'minimum', max: 'maximum' },
  string: { min: 'minLength', max: 'maxLength' },
  array: { min: 'minItems', max: 'maxItems' },
};

interface FullObjectSchema {
  schema: JsonObject;
  /** Where the properties sat in the input, for error paths. */
  propertiesPath: string;
  /** Loose keywords were rewritten, so the parameter list alone would lose them. */
  rewritten: boolean;
}

function isFullSchema(value: Record<string, unknown>): boolean {
  if (typeof value['type'] === 'string' || value['$schema'] !== undefined) return true;
  // In a property map, a property named "properties" would itself be a spec with a string type.
  return isPlainObject(value['properties']) && typeof value['properties']['type'] !== 'string';
}

/** Rewrites min/max and per-property required flags into standard JSON Schema. */
function standardiseProperty(spec: Record<string, unknown>): { spec: Record<string, unknown>; rewritten: boolean } {
  const copy: Record<string, unknown> = { ...spec };
  let rewritten = false;
  const bounds = LOOSE_BOUNDS[typeof copy['type'] === 'string' ? copy['type'] : 'number'] ?? LOOSE_BOUNDS['number'];
  for (const side of ['min', 'max'] as const) {
    if (copy[side] !== undefined && bounds) {
      copy[bounds[side]] ??= copy[side];
      delete copy[side];
      rewritten = true;
    }
  }
  delete copy['required'];
  return { spec: copy, rewritten };
}

export function toFullObjectSchema(value: unknown, path: string, issues: IssueList): FullObjectSchema | undefined {
  if (!isPlainObject(value) || !isJsonValue(value)) {
    issues.error(path, `must be a JSON object, not ${describe(value)}`);
    return undefined;
  }
  if (isFullSchema(value)) {
    if (value['type'] !== undefined && value['type'] !== 'object') {
      issues.error(at(path, 'type'), `an input schema must describe an object (type "object"), not ${describe(value['type'])}`);
      return undefined;
    }
    const schema = toJsonObject(value);
    // The dialect tag (often draft-07 from zod-built tools) is dropped: the Core validates every schema
    // as draft 2020-12, whose ajv refuses to compile a schema that names another meta-schema.
    delete schema['$schema'];
    schema['type'] = 'object';
    let rewritten = false;
    if (isPlainObject(schema['properties'])) {
      const properties: JsonObject = {};
      const listed = schema['required'];
      const required: JsonValue[] = Array.isArray(listed) ? [...listed] : [];
      for (const [name, spec] of Object.entries(schema['properties'])) {
        if (!isPlainObject(spec)) {
          properties[name] = spec as JsonValue;
          continue;
        }
        const standard = standardiseProperty(spec);
        // A boolean "required" inside a property (draft-3 style) joins the standard required list.
        if (spec['required'] === true && !required.includes(name)) required.push(name);
        rewritten ||= standard.rewritten;
        properties[name] = toJsonObject(standard.spec);
      }
      schema['properties'] = properties;
      if (listed === undefined ? required.length > 0 : Array.isArray(listed)) schema['required'] = required;
    }
    return { schema, propertiesPath: at(path, 'properties'), rewritten };
  }
  const properties: JsonObject = {};
  const required: string[] = [];
  let rewritten = false;
  for (const [name, spec] of Object.entries(value)) {
    if (!isPlainObject(spec)) {
      issues.error(at(path, name), `property schema must be an object, not ${describe(spec)}`);
      continue;
    }
    // In the bare map form a property is required unless it says otherwise or has a default
    // (ForgeSyte: "provide defaults for optional fields").
    if (spec['required'] === true || (spec['required'] === undefined && spec['default'] === undefined)) required.push(name);
    const standard = standardiseProperty(spec);
    rewritten ||= standard.rewritten;
    properties[name] = toJsonObject(standard.spec);
  }
  return { schema: { type: 'object', properties, required }, propertiesPath: path, rewritten };
}

export interface SchemaParameters {
  parameters: ParameterSpec[];
  input_schema?: JsonObject;
}

export function parametersFromInputSchema(value: unknown, path: string, issues: IssueList): SchemaParameters | undefined {
  const errorsBefore = issues.errors.length;
  const full = toFullObjectSchema(value, path, issues);
  if (!full) return undefined;
  const { schema, propertiesPath } = full;
  let lossy = full.rewritten;
  for (const key of Object.keys(schema)) if (!LOSSLESS_OBJECT_KEYS.has(key)) lossy = true;
  if (schema['additionalProperties'] !== undefined && schema['additionalProperties'] !== false) lossy = true;
  const requiredRaw = schema['required'] ?? [];
  let required: string[] = [];
  if (!Array.isArray(requiredRaw) || !requiredRaw.every((item) => typeof item === 'string')) {
    issues.error(at(path, 'required'), 'must be a list of property names');
  } else required = requiredRaw as string[];
  const properties = isPlainObject(schema['properties']) ? schema['properties'] : {};
  if (schema['properties'] !== undefined && !isPlainObject(schema['properties'])) {
    issues.error(propertiesPath, 'must be an object keyed by property name');
  }
  const parameters: ParameterSpec[] = [];
  for (const [name, spec] of Object.entries(properties)) {
    const propertyPath = at(propertiesPath, name);
    if (!isParameterName(name)) {
      issues.error(propertyPath, explainBadParameterName(name));
      continue;
    }
    if (!isPlainObject(spec)) {
      issues.error(propertyPath, `property schema must be an object, not ${describe(spec)}`);
      continue;
    }
    const { type, exact } = propertyType(spec, at(propertyPath, 'type'), issues);
    if (!type) continue;
    if (!exact) lossy = true;
    else if (spec['type'] !== type) (spec as JsonObject)['type'] = type; // an alias such as "int"
    for (const key of Object.keys(spec)) if (!LOSSLESS_PROPERTY_KEYS.has(key)) lossy = true;
    const parameter: ParameterSpec = { name, type, required: required.includes(name) };
    if (typeof spec['description'] === 'string') parameter.description = spec['description'];
    if (spec['default'] !== undefined) parameter.default = spec['default'] as JsonValue;
    if (Array.isArray(spec['enum']) && spec['enum'].length > 0) parameter.enum = spec['enum'] as JsonValue[];
    else if (spec['enum'] !== undefined) lossy = true;
    if (isPlainObject(spec['items'])) parameter.items = spec['items'] as JsonObject;
    else if (spec['items'] !== undefined) lossy = true;
    if (isPlainObject(spec['properties'])) parameter.properties = spec['properties'] as JsonObject;
    else if (spec['properties'] !== undefined) lossy = true;
    parameters.push(parameter);
  }
  if (issues.errors.length > errorsBefore) return undefined;
  if (!lossy) return { parameters };
  const compileError = jsonSchemaCompileError(schema);
  if (compileError) {
    issues.error(path, `is not a valid JSON Schema: ${compileError}`);
    return undefined;
  }
  return { parameters, input_schema: schema };
}

/**
 * The best parameter type for a property. exact=false when the schema says more than one type can
 * carry (type lists, anyOf, no type): the full schema is then kept for validation.
 */
function propertyType(spec: Record<string, unknown>, path: string, issues: IssueList): { type?: ParameterType; exact: boolean } {
  const declared = spec['type'];
  if (typeof declared === 'string') return { type: readParameterType(declared, path, issues, true), exact: true };
  if (Array.isArray(declared)) {
    const candidate = declared.find((item) => item !== 'null');
    return { type: readParameterType(candidate, path, issues, true), exact: false };
  }
  if (declared !== undefined) {
    issues.error(path, `must be a type name or a list of them, not ${describe(declared)}`);
    return { exact: false };
  }
  if (isPlainObject(spec['properties'])) return { type: 'object', exact: false };
  if (spec['items'] !== undefined) return { type: 'array', exact: false };
  const first = Array.isArray(spec['enum']) ? (spec['enum'][0] as unknown) : undefined;
  if (typeof first === 'number') return { type: 'number', exact: false };
  if (typeof first === 'boolean') return { type: 'boolean', exact: false };
  return { type: 'string', exact: false };
}

/** Output schemas may describe any value; only the bare property-map form is rewritten. */
export function outputSchemaFromLoose(value: unknown, path: string, issues: IssueList): JsonObject | undefined {
  if (!isPlainObject(value) || !isJsonValue(value)) {
    issues.error(path, `must be a JSON object, not ${describe(value)}`);
    return undefined;
  }
  if (Object.keys(value).length === 0) return undefined;
  if (isFullSchema(value) || value['anyOf'] !== undefined || value['oneOf'] !== undefined) return toJsonObject(value);
  const properties: JsonObject = {};
  for (const [name, spec] of Object.entries(value)) {
    if (!isPlainObject(spec)) {
      issues.error(at(path, name), `property schema must be an object, not ${describe(spec)}`);
      continue;
    }
    properties[name] = toJsonObject(standardiseProperty(spec).spec);
  }
  return { type: 'object', properties };
}

/** null when the schema compiles; the reason otherwise. Unknown keywords are tolerated (loose metadata). */
export function jsonSchemaCompileError(schema: JsonObject): string | null {
  try {
    new Ajv2020({ strict: false, validateFormats: false }).compile(schema);
    return null;
  } catch (error) {
    return errorMessage(error);
  }
}

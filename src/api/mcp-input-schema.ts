// Tool input schemas every MCP client can read, Home Assistant's in particular. Its MCP integration
// turns each tool's inputSchema into a voluptuous validator with voluptuous-openapi's
// convert_to_voluptuous and gives up on the WHOLE server when one schema fails. Across the versions
// Home Assistant has shipped (0.0.x to 0.4.x) that converter:
// - needs every schema to be an object with a `type` it knows (string, integer, number, boolean,
//   object, array), or a `oneOf` of such schemas; `type: "null"` and type lists fail before 0.1 / 0.2;
// - refuses `anyOf` (before 0.1), `allOf`, `multipleOf`, `uniqueItems` (all), `minItems` and `maxItems`
//   (before 0.3); does not resolve `$ref` (before 0.4);
// - reads an array's `items` unconditionally (missing → KeyError) and, from 0.4, converts a schema-valued
//   `additionalProperties` (so `{}` fails: no type);
// - compiles `pattern` with Python's `re` and validates `format: date-time` with one fixed layout.
//
// So the schema offered to clients is rewritten into that portable subset, accepting at least what the
// original accepts: references are inlined, unions are merged per type (`nullable` for null, a `oneOf`
// of disjoint types for the rest), constraints the subset cannot express are dropped. The Core still
// validates every call against the plugin's original schema, so nothing loosened here is let through.
// Where JSON Schema allows "any value", the schema says string: the converter's own default.
import type { JsonObject, JsonValue } from '../protocol/types.js';
import { isPlainObject } from '../kit/plain-object.js';

type Schema = JsonObject;

/** Schemas arrive as parsed JSON: any plain object among them is read as a schema. */
const isSchema = (value: unknown): value is Schema => isPlainObject(value);
type TypeName = 'string' | 'integer' | 'number' | 'boolean' | 'object' | 'array';

const TYPES: readonly TypeName[] = ['string', 'integer', 'number', 'boolean', 'object', 'array'];
/** Inlining stops after this many schema nodes (a reference graph can be exponential when expanded). */
const NODE_BUDGET = 10_000;
const MAX_DEPTH = 32;

interface Context {
  root: Schema;
  refs: string[];
  depth: number;
  budget: { left: number };
}

/** The schema as offered over MCP: always `type: object` at the top. */
export function portableInputSchema(schema: JsonObject): JsonObject {
  const context: Context = { root: schema, refs: [], depth: 0, budget: { left: NODE_BUDGET } };
  const { nullable: _nullable, ...result } = convert(schema, context);
  if (result.type === 'object') return result;
  // MCP requires an object; a top-level union of objects has been merged into one already.
  return { type: 'object', ...pickCommon(result), properties: {}, additionalProperties: true };
}

function pickCommon(schema: Schema): Schema {
  const out: Schema = {};
  for (const key of ['description', 'title'] as const) if (typeof schema[key] === 'string') out[key] = schema[key];
  if (schema.default !== undefined) out.default = schema.default;
  if (Array.isArray(schema.examples)) out.examples = schema.examples;
  return out;
}

function openPlaceholder(type: TypeName, from: Schema): Schema {
  if (type === 'object') return { ...pickCommon(from), type, properties: {}, additionalProperties: true };
  if (type === 'array') return { ...pickCommon(from), type, items: { type: 'string' } };
  return { ...pickCommon(from), type };
}

function resolvePointer(ref: string, root: Schema): Schema | undefined {
  if (!ref.startsWith('#')) return undefined;
  let current: JsonValue | undefined = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    let part: string;
    try {
      part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    } catch {
      return undefined;
    }
    if (Array.isArray(current)) current = current[Number(part)];
    else if (isSchema(current)) current = current[part];
    else return undefined;
  }
  return isSchema(current) ? current : typeof current === 'boolean' ? {} : undefined;
}

/** One schema node → its portable form (a schema that only allows null reads as a nullable string). */
function convert(input: unknown, context: Context): Schema {
  const schema = node(input, context);
  return schema.type === 'null' ? { ...pickCommon(schema), type: 'string', nullable: true } : schema;
}

/** Like convert, but a null-only schema stays `type: null` so that unions can fold it into `nullable`. */
function node(input: unknown, context: Context): Schema {
  context.budget.left -= 1;
  const schema: Schema = isSchema(input) ? input : {};
  if (context.budget.left <= 0 || context.depth > MAX_DEPTH) return openPlaceholder(guessType(schema) ?? 'object', schema);
  const inner: Context = { ...context, depth: context.depth + 1 };

  if (typeof schema.$ref === 'string') {
    const ref = schema.$ref;
    const { $ref: _ref, ...siblings } = schema;
    const target = resolvePointer(ref, context.root);
    // A recursive reference is cut where it repeats: an open value of the referenced type.
    if (target === undefined || context.refs.includes(ref)) return openPlaceholder(guessType(target ?? siblings) ?? 'object', siblings);
    return node({ ...target, ...siblings }, { ...inner, refs: [...context.refs, ref] });
  }
  if (Array.isArray(schema.allOf)) {
    const { allOf, ...rest } = schema;
    if (allOf.length === 0) return node(rest, inner);
    return intersect(allOf.map((part) => convert(isSchema(part) ? { ...rest, ...part } : rest, inner)));
  }
  const union = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (union) {
    const { anyOf: _a, oneOf: _o, ...rest } = schema;
    if (union.length === 0) return node(rest, inner);
    // The node's own keywords apply to every branch (e.g. an object whose anyOf only lists required sets).
    return unite(union.map((branch) => node(isSchema(branch) ? { ...rest, ...branch } : rest, inner)));
  }
  if (Array.isArray(schema.type)) {
    const { type: types, ...rest } = schema;
    const names = types.filter((t): t is string => typeof t === 'string');
    if (names.length === 0) return node(rest, inner);
    return unite(names.map((type) => node({ ...rest, type }, inner)));
  }
  if (schema.const !== undefined) {
    const { const: value, ...rest } = schema;
    return node({ ...rest, enum: [value] }, inner);
  }
  if (schema.type === 'null') return { ...pickCommon(schema), type: 'null' };
  if (Array.isArray(schema.enum) && typeof schema.type !== 'string') {
    const types = [...new Set(schema.enum.map(jsonType))];
    if (types.length > 1) return unite(types.map((type) => node({ ...schema, type }, inner)));
  }
  const type = (TYPES as readonly unknown[]).includes(schema.type) ? (schema.type as TypeName) : (guessType(schema) ?? 'string');
  return typed(schema, type, inner);
}

function jsonType(value: JsonValue): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The type a schema without `type` describes, from its other keywords. */
function guessType(schema: Schema | undefined): TypeName | undefined {
  if (!schema) return undefined;
  if (typeof schema.type === 'string' && (TYPES as readonly string[]).includes(schema.type)) return schema.type as TypeName;
  const has = (...keys: string[]): boolean => keys.some((key) => schema[key] !== undefined);
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const first = jsonType(schema.enum[0] as JsonValue);
    return (TYPES as readonly string[]).includes(first) ? (first as TypeName) : undefined;
  }
  if (has('properties', 'additionalProperties', 'patternProperties', 'required', 'minProperties', 'maxProperties', 'propertyNames')) return 'object';
  if (has('items', 'prefixItems', 'minItems', 'maxItems', 'contains', 'uniqueItems')) return 'array';
  if (has('minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf')) return 'number';
  if (has('minLength', 'maxLength', 'pattern', 'format')) return 'string';
  return undefined;
}

function typed(schema: Schema, type: TypeName, context: Context): Schema {
  const out: Schema = { type, ...pickCommon(schema) };
  if (schema.nullable === true) out.nullable = true;
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter((value) => value !== null && fitsType(value, type));
    if (schema.enum.includes(null)) out.nullable = true;
    if (values.length > 0) out.enum = values;
  }
  // OpenAPI's nullable does not widen an enum: null must be one of its values too.
  if (out.nullable === true && Array.isArray(out.enum)) out.enum = [...out.enum, null];
  switch (type) {
    case 'string':
      copyNumbers(schema, out, ['minLength', 'maxLength']);
      if (typeof schema.pattern === 'string' && isPortablePattern(schema.pattern)) out.pattern = schema.pattern;
      if (typeof schema.format === 'string') {
        // The converter validates date-time with one fixed layout that most ISO 8601 values miss.
        if (schema.format === 'date-time') out.description = appendSentence(out.description, 'Date and time in ISO 8601.');
        else out.format = schema.format;
      }
      return out;
    case 'integer':
    case 'number':
      copyNumbers(schema, out, ['minimum', 'maximum']);
      // Exclusive bounds become inclusive ones: a little wider, never narrower.
      if (out.minimum === undefined && typeof schema.exclusiveMinimum === 'number') out.minimum = schema.exclusiveMinimum;
      if (out.maximum === undefined && typeof schema.exclusiveMaximum === 'number') out.maximum = schema.exclusiveMaximum;
      return out;
    case 'boolean':
      return out;
    case 'object':
      return objectSchema(schema, out, context);
    case 'array':
      return arraySchema(schema, out, context);
  }
}

function objectSchema(schema: Schema, out: Schema, context: Context): Schema {
  const properties: Schema = {};
  if (isSchema(schema.properties)) {
    for (const [name, value] of Object.entries(schema.properties)) {
      if (value === false) continue; // a property that may never appear
      properties[name] = convert(value, context);
    }
  }
  const required = Array.isArray(schema.required)
    ? [...new Set(schema.required.filter((name): name is string => typeof name === 'string' && name in properties))]
    : [];
  out.properties = properties;
  if (required.length > 0) out.required = required;
  // Extra keys stay forbidden only where the original forbids them; any schema for them reads as "allowed".
  const extra = schema.additionalProperties;
  if (extra === false && schema.patternProperties === undefined) out.additionalProperties = false;
  else if (extra !== undefined || schema.patternProperties !== undefined || Object.keys(properties).length === 0) out.additionalProperties = true;
  return out;
}

function arraySchema(schema: Schema, out: Schema, context: Context): Schema {
  const parts: unknown[] = [];
  if (Array.isArray(schema.prefixItems)) parts.push(...schema.prefixItems);
  if (Array.isArray(schema.items)) parts.push(...schema.items);
  else if (isSchema(schema.items)) parts.push(schema.items);
  const items = parts.map((part) => convert(part, context));
  out.items = items.length === 0 ? { type: 'string' } : unite(items);
  return out;
}

function fitsType(value: JsonValue, type: TypeName): boolean {
  const actual = jsonType(value);
  return actual === type || (type === 'number' && actual === 'integer');
}

function copyNumbers(from: Schema, to: Schema, keys: string[]): void {
  for (const key of keys) if (typeof from[key] === 'number' && Number.isFinite(from[key])) to[key] = from[key];
}

function appendSentence(description: JsonValue | undefined, sentence: string): string {
  const text = typeof description === 'string' ? description.trim() : '';
  return text ? `${text}${/[.!?]$/.test(text) ? '' : '.'} ${sentence}` : sentence;
}

/**
 * A schema accepting what any of the (already portable) schemas accepts: same-type schemas merged into
 * one, null folded into `nullable`, integer folded into number, distinct types as a `oneOf` (disjoint,
 * so oneOf and anyOf agree).
 */
function unite(schemas: Schema[]): Schema {
  const all = schemas.flatMap((schema) => (Array.isArray(schema.oneOf) ? (schema.oneOf as Schema[]) : [schema]));
  const flat = all.filter((schema) => schema.type !== 'null');
  const nullable = flat.length < all.length || flat.some((schema) => schema.nullable === true);
  if (flat.length === 0) return { ...pickCommon(all[0] ?? {}), type: 'string', nullable: true };
  const byType = new Map<TypeName, Schema[]>();
  for (const schema of flat) {
    const type = schema.type as TypeName;
    byType.set(type, [...(byType.get(type) ?? []), schema]);
  }
  const integers = byType.get('integer');
  if (integers && byType.has('number')) {
    byType.set('number', [...(byType.get('number') ?? []), ...integers.map((s) => ({ ...s, type: 'number' }))]);
    byType.delete('integer');
  }
  // null goes to the first alternative only, so that the alternatives stay disjoint.
  const merged = [...byType.values()].map((group, i) => {
    const { nullable: _n, ...schema } = mergeSameType(group);
    const values = Array.isArray(schema.enum) ? schema.enum.filter((value) => value !== null) : undefined;
    if (values) schema.enum = nullable && i === 0 ? [...values, null] : values;
    return nullable && i === 0 ? { ...schema, nullable: true } : schema;
  });
  if (merged.length === 1) return merged[0] as Schema;
  const description = flat.map((s) => s.description).find((d) => typeof d === 'string');
  return { oneOf: merged, ...(typeof description === 'string' ? { description } : {}) };
}

/** Same-type schemas → one schema accepting each of them: constraints kept only where all agree. */
function mergeSameType(group: Schema[]): Schema {
  const [first, ...others] = group as [Schema, ...Schema[]];
  if (others.length === 0) return first;
  const out: Schema = { type: first.type as JsonValue, ...firstCommon(group) };
  if (group.every((s) => Array.isArray(s.enum))) out.enum = uniqueJson(group.flatMap((s) => s.enum as JsonValue[]));
  const all = (key: string): number[] | undefined => (group.every((s) => typeof s[key] === 'number') ? group.map((s) => s[key] as number) : undefined);
  for (const key of ['minLength', 'minimum']) {
    const values = all(key);
    if (values) out[key] = Math.min(...values);
  }
  for (const key of ['maxLength', 'maximum']) {
    const values = all(key);
    if (values) out[key] = Math.max(...values);
  }
  for (const key of ['pattern', 'format']) if (group.every((s) => s[key] !== undefined && s[key] === first[key])) out[key] = first[key] as JsonValue;
  if (first.type === 'array') out.items = unite(group.map((s) => s.items as Schema));
  if (first.type === 'object') {
    const names = uniqueJson(group.flatMap((s) => Object.keys(s.properties as Schema))) as string[];
    const properties: Schema = {};
    for (const name of names) {
      properties[name] = unite(group.map((s) => (s.properties as Schema)[name]).filter(isSchema));
    }
    out.properties = properties;
    // A key is required only if every alternative requires it.
    const required = names.filter((name) => group.every((s) => Array.isArray(s.required) && s.required.includes(name)));
    if (required.length > 0) out.required = required;
    out.additionalProperties = !group.every((s) => s.additionalProperties === false);
  }
  return out;
}

/** allOf: one schema per part (each already portable), required keys and properties combined. */
function intersect(parts: Schema[]): Schema {
  const objects = parts.filter((part) => part.type === 'object');
  if (objects.length < parts.length || objects.length === 0) return parts.length === 1 ? (parts[0] as Schema) : unite(parts);
  const out: Schema = { type: 'object', ...firstCommon(parts) };
  const byName = new Map<string, Schema[]>();
  for (const part of objects)
    for (const [name, value] of Object.entries(part.properties as Schema)) byName.set(name, [...(byName.get(name) ?? []), value as Schema]);
  const properties: Schema = {};
  for (const [name, schemas] of byName) properties[name] = unite(schemas);
  out.properties = properties;
  const required = uniqueJson(objects.flatMap((part) => (Array.isArray(part.required) ? part.required : []))) as string[];
  if (required.length > 0) out.required = required;
  out.additionalProperties = !objects.every((part) => part.additionalProperties === false);
  return out;
}

/** description, title, default, examples: each from the first schema that has it. */
function firstCommon(schemas: Schema[]): Schema {
  const out: Schema = {};
  for (const schema of [...schemas].reverse()) Object.assign(out, pickCommon(schema));
  return out;
}

function uniqueJson(values: JsonValue[]): JsonValue[] {
  const seen = new Set<string>();
  return values.filter((value) => {
    const key = JSON.stringify(value);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * Escaped letters that mean the same to JavaScript and to Python's `re`. Others differ: \c, \k, \p, \P
 * exist only in JavaScript; \a, \A, \Z, \N, \U are literals to JavaScript but escapes to Python; any
 * other letter is a literal to JavaScript and an error to Python.
 */
const SHARED_ESCAPE_LETTERS = new Set('bBdDfnrsStvwW'.split(''));

/**
 * True when the pattern means the same to JavaScript and to Python's `re`, as far as can be told
 * without Python: no `(?<...` (named groups are spelled differently, lookbehind must be fixed-width in
 * Python), no `[^]`, only escapes both read alike.
 */
export function isPortablePattern(pattern: string): boolean {
  try {
    new RegExp(pattern);
  } catch {
    return false;
  }
  if (/\(\?<|\[\^\]/.test(pattern)) return false;
  for (let i = 0; i < pattern.length; i += 1) {
    if (pattern[i] !== '\\') continue;
    const next = pattern[i + 1] ?? '';
    if (next === 'x' && !/^[0-9a-fA-F]{2}$/.test(pattern.slice(i + 2, i + 4))) return false;
    if (next === 'u' && !/^[0-9a-fA-F]{4}$/.test(pattern.slice(i + 2, i + 6))) return false;
    if (/[A-Za-z]/.test(next) && next !== 'x' && next !== 'u' && !SHARED_ESCAPE_LETTERS.has(next)) return false;
    i += 1;
  }
  return true;
}

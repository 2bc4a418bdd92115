// Coercion and validation of parameter values against the capability's JSON Schema. Values reach the
// resolver as text typed by a user, as JSON chosen by an LLM, or from YAML config and profiles, so "42"
// must become 42 for a number, "yes" true for a boolean, and "Card" the enum's "card" — while "abc" for
// a number is refused with a reason the user can act on.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import formatsModule from 'ajv-formats';
import { capabilityInputSchema, parameterSchema } from '../protocol/descriptor/json-schema.js';
import type { CapabilitySpec, JsonObject, JsonValue } from '../protocol/types.js';
import { isPlainObject } from '../kit/plain-object.js';

export type CoerceResult = { ok: true; value: JsonValue } | { ok: false; reason: string };

type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
// ajv-formats is CommonJS with a `default` property; under NodeNext the default import is the module object.
const addFormats: FormatsPlugin = (formatsModule as unknown as { default?: FormatsPlugin }).default ?? (formatsModule as unknown as FormatsPlugin);

const TRUE_WORDS = new Set(['true', 'yes', 'y', 'on', '1']);
const FALSE_WORDS = new Set(['false', 'no', 'n', 'off', '0']);
const NUMBER_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i;

function schemaTypes(schema: JsonObject): string[] {
  const type = schema.type;
  if (typeof type === 'string') return [type];
  if (Array.isArray(type)) return type.filter((t): t is string => typeof t === 'string');
  return [];
}

function describeValue(value: JsonValue): string {
  return typeof value === 'string' ? `"${value}"` : JSON.stringify(value);
}

function parseJsonText(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

function coerceNumber(value: JsonValue, integer: boolean): CoerceResult {
  let n: number | undefined;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && NUMBER_TEXT.test(value.trim())) n = Number(value.trim());
  if (n === undefined || !Number.isFinite(n)) {
    return { ok: false, reason: integer ? 'must be a whole number' : 'must be a number' };
  }
  if (integer && !Number.isInteger(n)) return { ok: false, reason: 'must be a whole number' };
  return { ok: true, value: n };
}

function coerceBoolean(value: JsonValue): CoerceResult {
  if (typeof value === 'boolean') return { ok: true, value };
  if (typeof value === 'number' && (value === 0 || value === 1)) return { ok: true, value: value === 1 };
  if (typeof value === 'string') {
    const word = value.trim().toLowerCase();
    if (TRUE_WORDS.has(word)) return { ok: true, value: true };
    if (FALSE_WORDS.has(word)) return { ok: true, value: false };
  }
  return { ok: false, reason: 'must be yes or no (true/false)' };
}

function coerceString(value: JsonValue): CoerceResult {
  if (typeof value === 'string') return { ok: true, value: value.trim() };
  if (typeof value === 'number' || typeof value === 'boolean') return { ok: true, value: String(value) };
  return { ok: false, reason: 'must be text' };
}

function coerceObject(value: JsonValue): CoerceResult {
  if (isPlainObject(value)) return { ok: true, value };
  if (typeof value === 'string') {
    const parsed = parseJsonText(value.trim());
    if (isPlainObject(parsed)) return { ok: true, value: parsed };
  }
  return { ok: false, reason: 'must be a JSON object (e.g. {"key": "value"})' };
}

function coerceArray(value: JsonValue, schema: JsonObject): CoerceResult {
  let list: JsonValue[] | undefined;
  if (Array.isArray(value)) list = value;
  else if (typeof value === 'string') {
    const text = value.trim();
    const parsed = text.startsWith('[') ? parseJsonText(text) : undefined;
    if (Array.isArray(parsed)) list = parsed;
    // A user typing "milk, bread" means a list; only plain text lists, never half-parsed JSON.
    else if (!text.startsWith('['))
      list = text
        .split(',')
        .map((part) => part.trim())
        .filter((part) => part !== '');
  }
  if (list === undefined) return { ok: false, reason: 'must be a list (e.g. ["a", "b"] or a, b)' };
  const items = schema.items;
  if (!isPlainObject(items)) return { ok: true, value: list };
  const coerced: JsonValue[] = [];
  for (const [index, item] of list.entries()) {
    const result = coerceToSchema(item, items);
    if (!result.ok) return { ok: false, reason: `item ${index + 1} ${result.reason}` };
    coerced.push(result.value);
  }
  return { ok: true, value: coerced };
}

function coerceByType(value: JsonValue, type: string, schema: JsonObject): CoerceResult {
  switch (type) {
    case 'number':
      return coerceNumber(value, false);
    case 'integer':
      return coerceNumber(value, true);
    case 'boolean':
      return coerceBoolean(value);
    case 'string':
      return coerceString(value);
    case 'object':
      return coerceObject(value);
    case 'array':
      return coerceArray(value, schema);
    case 'null':
      return value === null ? { ok: true, value } : { ok: false, reason: 'must be empty' };
    default:
      return { ok: true, value };
  }
}

function matchEnum(value: JsonValue, options: JsonValue[]): CoerceResult {
  const exact = options.find((option) => JSON.stringify(option) === JSON.stringify(value));
  if (exact !== undefined) return { ok: true, value: exact };
  if (typeof value === 'string') {
    const wanted = value.trim().toLowerCase();
    const loose = options.find((option) => typeof option === 'string' && option.toLowerCase() === wanted);
    if (loose !== undefined) return { ok: true, value: loose };
  }
  return { ok: false, reason: `must be one of: ${options.map((option) => describeValue(option)).join(', ')}` };
}

/**
 * Coerces one value to a property schema's type and enum. Only the type and enum are handled here;
 * the remaining keywords (minimum, pattern, format, ...) are checked by ajv in ValueCoercer.
 */
export function coerceToSchema(value: JsonValue, schema: JsonObject): CoerceResult {
  const types = schemaTypes(schema);
  let result: CoerceResult = { ok: true, value };
  if (types.length > 0) {
    // With a union type the first type that accepts the value wins, in the schema's own order.
    let firstFailure: CoerceResult | undefined;
    result = { ok: false, reason: 'has an unsupported type' };
    for (const type of types) {
      const attempt = coerceByType(value, type, schema);
      if (attempt.ok) {
        result = attempt;
        break;
      }
      firstFailure ??= attempt;
    }
    if (!result.ok && firstFailure) result = firstFailure;
  }
  if (result.ok && Array.isArray(schema.enum)) return matchEnum(result.value, schema.enum);
  return result;
}

function explainAjvError(error: ErrorObject): string {
  const where = error.instancePath ? `at ${error.instancePath} ` : '';
  return `${where}${error.message ?? 'is not valid'}`;
}

/**
 * Coerces and validates parameter values per capability. Compiled validators are cached per capability
 * object, so a registry update (a new object) recompiles and nothing stale is kept alive.
 */
export class ValueCoercer {
  private readonly ajv: Ajv2020;
  private readonly cache = new WeakMap<CapabilitySpec, Map<string, { schema: JsonObject; validate?: ValidateFunction }>>();

  constructor() {
    // strict off: MCP and ForgeSyte schemas carry keywords ajv does not know (x-*, examples in odd places).
    this.ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
    addFormats(this.ajv);
  }

  /** The JSON Schema of each property of the capability, keyed by parameter name. */
  propertySchemas(capability: CapabilitySpec): Map<string, { schema: JsonObject; validate?: ValidateFunction }> {
    const cached = this.cache.get(capability);
    if (cached) return cached;
    const root = capabilityInputSchema(capability);
    const properties = isPlainObject(root.properties) ? root.properties : {};
    const entries = new Map<string, { schema: JsonObject; validate?: ValidateFunction }>();
    const names = new Set([...capability.parameters.map((p) => p.name), ...Object.keys(properties)]);
    for (const name of names) {
      const fromRoot = properties[name];
      const spec = capability.parameters.find((p) => p.name === name);
      const schema = isPlainObject(fromRoot) ? fromRoot : spec ? parameterSchema(spec) : {};
      entries.set(name, { schema, validate: this.compile(schema, root) });
    }
    this.cache.set(capability, entries);
    return entries;
  }

  /** Coerces a value for the named parameter; unknown names are refused. */
  coerce(capability: CapabilitySpec, name: string, value: JsonValue): CoerceResult {
    const entry = this.propertySchemas(capability).get(name);
    if (!entry) return { ok: false, reason: 'is not a parameter of this capability' };
    const coerced = coerceToSchema(value, entry.schema);
    if (!coerced.ok || !entry.validate) return coerced;
    if (entry.validate(coerced.value)) return coerced;
    const first = entry.validate.errors?.[0];
    return { ok: false, reason: first ? explainAjvError(first) : 'is not valid' };
  }

  private compile(schema: JsonObject, root: JsonObject): ValidateFunction | undefined {
    // $refs in MCP schemas point into the root's $defs; carry them along so the property compiles alone.
    const standalone: JsonObject = { ...schema };
    if (isPlainObject(root.$defs)) standalone.$defs = root.$defs;
    if (isPlainObject(root.definitions)) standalone.definitions = root.definitions;
    try {
      return this.ajv.compile(standalone);
    } catch {
      // An uncompilable schema leaves type/enum coercion as the only check rather than refusing every value.
      return undefined;
    }
  }
}

// A capability's parameter JSON Schema as form fields, and the fields' text back as parameters. Only the
// top level of the schema becomes fields: strings, numbers, integers, booleans and enums get their own
// control; arrays, objects and anything the form cannot express are typed as JSON text. Pure (no DOM),
// so it is unit-tested under Node; the server validates every call against the full schema anyway.

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'json';

export interface FieldSpec {
  name: string;
  kind: FieldKind;
  required: boolean;
  description?: string;
  /** enum: the allowed values. */
  options?: JsonValue[];
  /** json: what the JSON text must be. */
  json?: 'array' | 'object' | 'any';
  minimum?: number;
  maximum?: number;
  /** The schema's default as the field's initial text ('' when none). */
  initial: string;
}

export interface FormSpec {
  fields: FieldSpec[];
  /** The schema accepts properties it does not list: the form offers a JSON object for those. */
  extra: boolean;
}

type Schema = Record<string, unknown>;

const isObject = (value: unknown): value is Schema => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The single non-null type of a schema, or undefined when it has none or several. */
function typeOf(schema: Schema): string | undefined {
  const type = schema['type'];
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) {
    const real = type.filter((t) => t !== 'null');
    return real.length === 1 && typeof real[0] === 'string' ? real[0] : undefined;
  }
  if (isObject(schema['properties'])) return 'object';
  if (isObject(schema['items'])) return 'array';
  return undefined;
}

/** The text an enum option is stored as in a <select> (values may be numbers or strings). */
export const optionText = (value: JsonValue): string => JSON.stringify(value);

function initialText(kind: FieldKind, value: unknown): string {
  if (value === undefined) return '';
  if (kind === 'enum') return optionText(value as JsonValue);
  if (kind === 'json') return JSON.stringify(value, null, 2);
  return typeof value === 'string' ? value : String(value);
}

function fieldOf(name: string, schema: Schema, required: boolean): FieldSpec {
  const type = typeOf(schema);
  let kind: FieldKind;
  let json: FieldSpec['json'];
  if (Array.isArray(schema['enum']) && schema['enum'].length > 0) kind = 'enum';
  else if (type === 'string' || type === 'number' || type === 'integer' || type === 'boolean') kind = type;
  else {
    kind = 'json';
    json = type === 'array' ? 'array' : type === 'object' ? 'object' : 'any';
  }
  const field: FieldSpec = { name, kind, required, initial: initialText(kind, schema['default']) };
  if (typeof schema['description'] === 'string') field.description = schema['description'];
  if (kind === 'enum') field.options = schema['enum'] as JsonValue[];
  if (json) field.json = json;
  if (typeof schema['minimum'] === 'number') field.minimum = schema['minimum'];
  if (typeof schema['maximum'] === 'number') field.maximum = schema['maximum'];
  return field;
}

export function formOf(schema: unknown): FormSpec {
  if (!isObject(schema)) return { fields: [], extra: true };
  const properties = isObject(schema['properties']) ? schema['properties'] : {};
  const required = new Set(Array.isArray(schema['required']) ? schema['required'].filter((n): n is string => typeof n === 'string') : []);
  const fields = Object.entries(properties).map(([name, property]) => fieldOf(name, isObject(property) ? property : {}, required.has(name)));
  const additional = schema['additionalProperties'];
  // Without listed properties, an object schema that does not forbid others takes any object.
  const extra = additional !== false && (Object.keys(properties).length === 0 || isObject(additional) || additional === true);
  return { fields, extra };
}

export type FieldValue = { ok: true; value?: JsonValue } | { ok: false; error: string };

/** One field's text as a parameter value; `value` undefined means "leave it out". */
export function parseField(field: FieldSpec, text: string): FieldValue {
  const blank = text.trim() === '';
  if (blank && field.kind !== 'string') return field.required ? { ok: false, error: 'required' } : { ok: true };
  if (field.kind === 'string') {
    if (text === '') return field.required ? { ok: false, error: 'required' } : { ok: true };
    return { ok: true, value: text };
  }
  if (field.kind === 'number' || field.kind === 'integer') {
    const n = Number(text.trim());
    if (!Number.isFinite(n)) return { ok: false, error: 'must be a number' };
    if (field.kind === 'integer' && !Number.isInteger(n)) return { ok: false, error: 'must be a whole number' };
    if (field.minimum !== undefined && n < field.minimum) return { ok: false, error: `must be at least ${field.minimum}` };
    if (field.maximum !== undefined && n > field.maximum) return { ok: false, error: `must be at most ${field.maximum}` };
    return { ok: true, value: n };
  }
  if (field.kind === 'boolean') {
    if (text === 'true' || text === 'false') return { ok: true, value: text === 'true' };
    return { ok: false, error: 'must be true or false' };
  }
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    return { ok: false, error: field.kind === 'enum' ? 'pick one of the values' : 'is not valid JSON' };
  }
  if (field.kind === 'enum') {
    const allowed = (field.options ?? []).some((option) => optionText(option) === optionText(value));
    return allowed ? { ok: true, value } : { ok: false, error: 'pick one of the values' };
  }
  if (field.json === 'array' && !Array.isArray(value)) return { ok: false, error: 'must be a JSON array, e.g. ["a", "b"]' };
  if (field.json === 'object' && !isObject(value)) return { ok: false, error: 'must be a JSON object, e.g. {"key": "value"}' };
  return { ok: true, value };
}

export type Collected = { ok: true; parameters: Record<string, JsonValue> } | { ok: false; errors: Record<string, string> };

/** Every field at once, so the form shows every problem together. `extraText`: the JSON of unlisted keys. */
export function collectParameters(form: FormSpec, texts: Record<string, string>, extraText = ''): Collected {
  const parameters: Record<string, JsonValue> = {};
  const errors: Record<string, string> = {};
  if (form.extra && extraText.trim() !== '') {
    let extra: unknown;
    try {
      extra = JSON.parse(extraText);
    } catch {
      extra = undefined;
    }
    if (isObject(extra)) Object.assign(parameters, extra);
    else errors['*'] = 'must be a JSON object, e.g. {"key": "value"}';
  }
  for (const field of form.fields) {
    const parsed = parseField(field, texts[field.name] ?? field.initial);
    if (!parsed.ok) errors[field.name] = parsed.error;
    else if (parsed.value !== undefined) parameters[field.name] = parsed.value;
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, parameters };
}

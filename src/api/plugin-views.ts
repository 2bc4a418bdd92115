// How plugins look from the outside: the canonical form for /api/plugins (secrets in config hidden)
// and the ForgeSyte shape for /v1/plugins.
import { parameterSchema } from '../protocol/descriptor/json-schema.js';
import type { CapabilitySpec, JsonObject, JsonValue, PluginConfig } from '../protocol/types.js';
import type { PluginRecord } from '../registry/record.js';
import { isPlainObject } from '../kit/plain-object.js';

const SECRET_KEY = /(pass(word|phrase)?|secret|token|api[_-]?key|private[_-]?key|access[_-]?key|authorization|cookie|credential)/i;
/** Maps that exist to carry keys to a plugin (a child's environment, request headers): every value is hidden. */
const SECRET_MAPS: ReadonlySet<string> = new Set(['env', 'headers']);
const REDACTED = '[redacted]';

function redact(value: JsonValue | undefined): JsonValue | undefined {
  if (Array.isArray(value)) return value.map((v) => redact(v) ?? null);
  if (value !== null && typeof value === 'object') {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      if (SECRET_KEY.test(k)) out[k] = REDACTED;
      else if (SECRET_MAPS.has(k) && isPlainObject(v)) out[k] = hideValues(v as JsonObject);
      else out[k] = redact(v) ?? null;
    }
    return out;
  }
  return value;
}

function hideValues(map: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const key of Object.keys(map)) out[key] = REDACTED;
  return out;
}

export function redactConfig(config: PluginConfig): JsonObject {
  return (redact(config as JsonObject) as JsonObject | undefined) ?? {};
}

export function canonicalView(record: PluginRecord): JsonObject {
  const d = record.descriptor;
  return {
    ...(JSON.parse(JSON.stringify(d)) as JsonObject),
    config: redactConfig(d.config),
    state: record.state,
    ...(record.state_reason ? { state_reason: record.state_reason } : {}),
    registered_at: new Date(record.registered_at).toISOString(),
    updated_at: new Date(record.updated_at).toISOString(),
  };
}

export function summaryView(record: PluginRecord): JsonObject {
  const d = record.descriptor;
  return {
    id: d.id,
    name: d.name,
    type: d.type,
    source: d.source,
    state: record.state,
    ...(record.state_reason ? { state_reason: record.state_reason } : {}),
    ...(d.version ? { version: d.version } : {}),
    capabilities: d.capabilities.map((c) => c.id),
  };
}

export function forgeSyteView(record: PluginRecord): JsonObject {
  const d = record.descriptor;
  const tools: JsonObject = {};
  for (const c of d.capabilities) {
    tools[c.id] = { description: c.description, input_schema: forgeSyteInputSchema(c), output_schema: forgeSyteOutputSchema(c) };
  }
  return { name: d.id, description: d.description, version: d.version ?? '1.0.0', tools };
}

/**
 * ForgeSyte's input_schema: a map of parameter name to its schema. In that form a parameter is required
 * unless it has a default, so "required" is written only where the capability says otherwise.
 */
export function forgeSyteInputSchema(capability: CapabilitySpec): JsonObject {
  const map: JsonObject = {};
  const full = capability.input_schema;
  if (full) {
    const properties = isPlainObject(full['properties']) ? full['properties'] : {};
    const required = new Set(Array.isArray(full['required']) ? full['required'].filter((n): n is string => typeof n === 'string') : []);
    for (const [name, spec] of Object.entries(properties)) {
      map[name] = withRequiredMarker(isPlainObject(spec) ? structuredClone(spec) : {}, required.has(name));
    }
    return map;
  }
  for (const parameter of capability.parameters) map[parameter.name] = withRequiredMarker(parameterSchema(parameter), parameter.required);
  return map;
}

function withRequiredMarker(spec: JsonObject, required: boolean): JsonObject {
  delete spec['required'];
  const impliedRequired = spec['default'] === undefined;
  if (required !== impliedRequired) spec['required'] = required;
  return spec;
}

/**
 * ForgeSyte's output_schema: a map of output field to its schema. A declared object schema gives its
 * properties; any other declared schema is kept whole; a capability that declares none answers with
 * text (PluginResult.text), described by its output_description.
 */
export function forgeSyteOutputSchema(capability: CapabilitySpec): JsonObject {
  const declared = capability.output_schema;
  if (declared && isPlainObject(declared['properties']) && (declared['type'] === undefined || declared['type'] === 'object')) {
    return structuredClone(declared['properties']);
  }
  if (declared) return structuredClone(declared);
  return { text: { type: 'string', description: capability.output_description ?? "The plugin's answer." } };
}

// How plugins look from the outside: the canonical form for /api/plugins (secrets in config hidden)
// and the ForgeSyte shape for /v1/plugins.
import { capabilityInputSchema } from '../protocol/descriptor/json-schema.js';
import type { JsonObject, JsonValue, PluginConfig } from '../protocol/types.js';
import type { PluginRecord } from '../registry/record.js';

const SECRET_KEY = /(pass(word)?|secret|token|api[_-]?key|authorization)/i;

function redact(value: JsonValue | undefined): JsonValue | undefined {
  if (Array.isArray(value)) return value.map((v) => redact(v) ?? null);
  if (value !== null && typeof value === 'object') {
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      out[k] = SECRET_KEY.test(k) ? '[redacted]' : (redact(v) ?? null);
    }
    return out;
  }
  return value;
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
    tools[c.id] = {
      description: c.description,
      input_schema: capabilityInputSchema(c),
      output_schema: c.output_schema ?? (c.output_description ? { description: c.output_description } : {}),
    };
  }
  return { name: d.id, description: d.description, version: d.version ?? '1.0.0', tools };
}

// key=value arguments of `homeclaw invoke` and `homeclaw profile set`, coerced to the declared
// parameter types so `count=3` is a number and `phone=5551234` stays a string.
import type { JsonObject, JsonValue, ParameterSpec } from '../protocol/types.js';

export function parseKeyValues(args: string[]): { values: Record<string, string>; errors: string[] } {
  const values: Record<string, string> = {};
  const errors: string[] = [];
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq <= 0) {
      errors.push(`"${arg}" is not key=value`);
      continue;
    }
    values[arg.slice(0, eq)] = arg.slice(eq + 1);
  }
  return { values, errors };
}

function coerce(raw: string, type: ParameterSpec['type'] | undefined): JsonValue {
  switch (type) {
    case 'string':
      return raw;
    case 'number':
    case 'integer': {
      const n = Number(raw);
      return raw.trim() !== '' && Number.isFinite(n) ? n : raw;
    }
    case 'boolean':
      if (/^(true|yes|1)$/i.test(raw)) return true;
      if (/^(false|no|0)$/i.test(raw)) return false;
      return raw;
    case 'object':
    case 'array':
      try {
        return JSON.parse(raw) as JsonValue;
      } catch {
        return raw;
      }
    default:
      // Unknown parameter: JSON when it parses (numbers, booleans, arrays), else the text; the Core reports
      // unknown parameters precisely.
      try {
        return JSON.parse(raw) as JsonValue;
      } catch {
        return raw;
      }
  }
}

export function coerceParameters(values: Record<string, string>, parameters: ParameterSpec[]): JsonObject {
  const byName = new Map(parameters.map((p) => [p.name, p]));
  const out: JsonObject = {};
  for (const [key, raw] of Object.entries(values)) out[key] = coerce(raw, byName.get(key)?.type);
  return out;
}

// Capability ids end up inside MCP tool names ('<plugin>__<capability>') and LLM function names;
// parameter names become JSON property names in LLM tool schemas and CLI key=value pairs. Both patterns
// are mirrored in topics/schemas/common.schema.json (a test keeps them equal).
import { explainBadId, PLUGIN_ID_PATTERN } from '../ids.js';

export const CAPABILITY_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const PARAMETER_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/**
 * The members every JavaScript object has. A parameter named after one is "present" in every call
 * (`parameters.constructor` is a function), so defaults and required checks cannot see it missing, and
 * "__proto__" cannot be set as data at all. Mirrored in the schema's parameter_name.
 */
export const RESERVED_PARAMETER_NAMES: ReadonlySet<string> = new Set([
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  '__proto__',
  'constructor',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  'toString',
  'valueOf',
]);

export function isCapabilityId(value: unknown): value is string {
  return typeof value === 'string' && CAPABILITY_ID_PATTERN.test(value);
}

export function isParameterName(value: unknown): value is string {
  return typeof value === 'string' && PARAMETER_NAME_PATTERN.test(value) && !RESERVED_PARAMETER_NAMES.has(value);
}

export function explainBadPluginId(value: unknown): string {
  return explainBadId(value, 'plugin id');
}

export function explainBadCapabilityId(value: unknown): string {
  if (typeof value !== 'string') return 'capability id must be a string';
  if (value.length === 0) return 'capability id must not be empty';
  if (value.length > 64) return `capability id is ${value.length} characters long; at most 64 are allowed`;
  return `capability id "${value}" must match ${CAPABILITY_ID_PATTERN.source} (letters, digits, _ and -)`;
}

export function explainBadParameterName(value: unknown): string {
  if (typeof value !== 'string') return 'parameter name must be a string';
  if (value.length === 0) return 'parameter name must not be empty';
  if (value.length > 64) return `parameter name is ${value.length} characters long; at most 64 are allowed`;
  if (RESERVED_PARAMETER_NAMES.has(value)) {
    return `parameter name "${value}" is reserved: every JavaScript object has a member of that name, so a call could never be seen to lack it`;
  }
  return `parameter name "${value}" must match ${PARAMETER_NAME_PATTERN.source} (a letter or _, then letters, digits, _ and -)`;
}

export { PLUGIN_ID_PATTERN };

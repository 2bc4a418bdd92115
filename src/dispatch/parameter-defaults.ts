// Parameter defaults from the plugin's config (config.yml: default_parameters, per-capability
// capabilities.<id>.default_parameters, config_key entries) and the manifest's `default`, in one
// place for every path: the conversation's resolver reads config values through configValue, and the
// dispatcher fills whatever a direct call (HTTP run route, CLI, MCP, MQTT) left out before validating.
import type { CapabilitySpec, JsonObject, JsonValue, ParameterSpec, PluginConfig } from '../protocol/types.js';
import { isPlainObject } from '../kit/plain-object.js';

/** Plugin config keys with a meaning of their own; a config_key naming one of them is ignored. */
const RESERVED_CONFIG_KEYS = new Set([
  'default_parameters',
  'use_defaults_directly',
  'use_default_directly_for',
  'capabilities',
  'max_concurrency',
  'queue_limit',
  'timeout_sec',
]);

/** Absent, null, and empty or whitespace-only text all count as "no value". */
export function isBlank(value: JsonValue | undefined): value is undefined | null | '' {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

function own(object: Record<string, JsonValue | undefined> | undefined, key: string | undefined): JsonValue | undefined {
  if (!object || key === undefined || !Object.hasOwn(object, key)) return undefined;
  return object[key];
}

function capabilityDefaults(config: PluginConfig, capabilityId: string): JsonObject | undefined {
  const perCapability = config.capabilities;
  if (!isPlainObject(perCapability)) return undefined;
  const entry = own(perCapability, capabilityId);
  if (!isPlainObject(entry)) return undefined;
  const defaults = entry.default_parameters;
  return isPlainObject(defaults) ? defaults : undefined;
}

/**
 * The config value for a parameter: per-capability default_parameters win over plugin-level ones; in
 * each, the parameter's own name wins over its config_key; last, a top-level config entry named by
 * config_key (e.g. `default_address: ...` for a parameter with `config_key: default_address`).
 */
export function configValue(config: PluginConfig, capabilityId: string, parameter: ParameterSpec): JsonValue | undefined {
  const levels = [capabilityDefaults(config, capabilityId), isPlainObject(config.default_parameters) ? config.default_parameters : undefined];
  for (const defaults of levels) {
    for (const key of [parameter.name, parameter.config_key]) {
      const value = own(defaults, key);
      if (!isBlank(value)) return value;
    }
  }
  if (parameter.config_key && !RESERVED_CONFIG_KEYS.has(parameter.config_key)) {
    const value = own(config as JsonObject, parameter.config_key);
    if (!isBlank(value)) return value;
  }
  return undefined;
}

/** Config values for this parameter are used without asking (use_defaults_directly / use_default_directly_for). */
export function configIsTrusted(config: PluginConfig, parameterName: string): boolean {
  if (config.use_defaults_directly === true) return true;
  const list = config.use_default_directly_for;
  return Array.isArray(list) && list.includes(parameterName);
}

/**
 * The parameters with every absent one filled from config (configValue), then from the manifest's
 * default. Given values, even empty ones, are never replaced: an explicit call means what it says.
 * Returns the same object when nothing was filled (the common case costs no copy).
 */
export function withParameterDefaults(config: PluginConfig, capability: CapabilitySpec, parameters: JsonObject): JsonObject {
  let filled: JsonObject | undefined;
  for (const parameter of capability.parameters) {
    if (parameters[parameter.name] !== undefined) continue;
    const fromConfig = configValue(config, capability.id, parameter);
    const value = fromConfig !== undefined ? fromConfig : isBlank(parameter.default) ? undefined : parameter.default;
    if (value === undefined) continue;
    // Object.assign, not a spread: V8 makes adding a key to a spread copy slow (~0.5 µs).
    filled ??= Object.assign({}, parameters);
    // Objects and arrays are copied so a plugin changing its parameters cannot change the config.
    filled[parameter.name] = typeof value === 'object' && value !== null ? structuredClone(value) : value;
  }
  return filled ?? parameters;
}

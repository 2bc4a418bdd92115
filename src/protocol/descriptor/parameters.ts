// One parameter spec reader for every dialect: HomeClaw lists parameters with their name inside,
// RAGFlow and ForgeSyte key them by name; the fields themselves mean the same everywhere.
import { PARAMETER_TYPES, SYSTEM_KEYS } from '../types.js';
import type { JsonValue, ParameterSpec, ParameterType, SystemKey } from '../types.js';
import { FieldReader, type IssueList, at, describe, isJsonValue } from './issues.js';
import { explainBadParameterName, isParameterName } from './name-patterns.js';
import { isPlainObject } from '../../kit/plain-object.js';

/**
 * Python-ish spellings used by RAGFlow ("whatever the LLM can recognise") and loose JSON-schema-like
 * metadata. HomeClaw descriptors use the canonical names only.
 */
const TYPE_ALIASES: Record<string, ParameterType> = {
  str: 'string',
  text: 'string',
  int: 'integer',
  float: 'number',
  double: 'number',
  bool: 'boolean',
  dict: 'object',
  list: 'array',
};

export interface ParameterReadOptions {
  /** Accept TYPE_ALIASES. */
  typeAliases: boolean;
  /** Keys that belong to the dialect and are read elsewhere or deliberately ignored (no warning). */
  extraKnownKeys?: readonly string[];
  /** Ignore keys starting with this prefix without a warning (RAGFlow's display* i18n fields). */
  ignoredPrefix?: string;
}

const PARAMETER_KEYS = [
  'name',
  'type',
  'required',
  'default',
  'description',
  'enum',
  'items',
  'properties',
  'profile_key',
  'config_key',
  'system_key',
  'confirm_if_uncertain',
];

export function readParameterType(value: unknown, path: string, issues: IssueList, typeAliases: boolean): ParameterType | undefined {
  if (value === undefined || value === null) {
    issues.error(path, `type is required; one of: ${PARAMETER_TYPES.join(', ')}`);
    return undefined;
  }
  if (typeof value === 'string') {
    const lower = value.toLowerCase();
    if ((PARAMETER_TYPES as readonly string[]).includes(value)) return value as ParameterType;
    if (typeAliases) {
      if ((PARAMETER_TYPES as readonly string[]).includes(lower)) return lower as ParameterType;
      const alias = TYPE_ALIASES[lower];
      if (alias) return alias;
    }
  }
  issues.error(path, `unknown parameter type ${describe(value)}; allowed types: ${PARAMETER_TYPES.join(', ')}`);
  return undefined;
}

export function matchesType(value: JsonValue, type: ParameterType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'number':
      return typeof value === 'number';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isPlainObject(value);
  }
}

/** Reads a parameter whose name was found at namePath (inside the spec for HomeClaw, the key otherwise). */
export function readParameter(
  name: unknown,
  namePath: string,
  spec: unknown,
  path: string,
  issues: IssueList,
  options: ParameterReadOptions,
): ParameterSpec | undefined {
  if (!isParameterName(name)) {
    issues.error(namePath, name === undefined ? 'parameter name is required' : explainBadParameterName(name));
  }
  if (!isPlainObject(spec)) {
    issues.error(path, `parameter must be an object, not ${describe(spec)}`);
    return undefined;
  }
  const errorsBefore = issues.errors.length;
  const fields = new FieldReader(spec, path, issues);
  const type = readParameterType(spec['type'], at(path, 'type'), issues, options.typeAliases);
  // Default true: a parameter is required unless it says otherwise (RAGFlow always states it).
  const required = fields.boolean('required') ?? true;
  const description = fields.string('description');
  let defaultValue: JsonValue | undefined;
  if (spec['default'] !== undefined) {
    if (!isJsonValue(spec['default'])) issues.error(at(path, 'default'), 'must be a JSON value');
    else if (type && !matchesType(spec['default'], type)) issues.error(at(path, 'default'), `must be of type ${type}`);
    else defaultValue = spec['default'];
  }
  let enumValues: JsonValue[] | undefined;
  if (spec['enum'] !== undefined) {
    const raw = spec['enum'];
    if (!Array.isArray(raw) || raw.length === 0 || !raw.every((item) => isJsonValue(item))) {
      issues.error(at(path, 'enum'), 'must be a non-empty list of JSON values');
    } else {
      raw.forEach((item, index) => {
        if (type && !matchesType(item as JsonValue, type)) issues.error(at(at(path, 'enum'), index), `must be of type ${type}`);
      });
      enumValues = raw as JsonValue[];
    }
  }
  const items = fields.object('items');
  const properties = fields.object('properties');
  const profileKey = fields.string('profile_key', { nonEmpty: true });
  const configKey = fields.string('config_key', { nonEmpty: true });
  let systemKey: SystemKey | undefined;
  if (spec['system_key'] !== undefined) {
    if (typeof spec['system_key'] === 'string' && (SYSTEM_KEYS as readonly string[]).includes(spec['system_key'])) {
      systemKey = spec['system_key'] as SystemKey;
    } else {
      issues.error(at(path, 'system_key'), `unknown system key ${describe(spec['system_key'])}; allowed: ${SYSTEM_KEYS.join(', ')}`);
    }
  }
  const confirm = fields.boolean('confirm_if_uncertain');
  const known = new Set([...PARAMETER_KEYS, ...(options.extraKnownKeys ?? [])]);
  for (const key of Object.keys(spec)) {
    if (known.has(key) || spec[key] === undefined) continue;
    if (options.ignoredPrefix && key.startsWith(options.ignoredPrefix)) continue;
    issues.warn(at(path, key), 'unknown field ignored');
  }
  if (issues.errors.length > errorsBefore || !type || !isParameterName(name)) return undefined;
  const parameter: ParameterSpec = { name, type, required };
  if (defaultValue !== undefined) parameter.default = defaultValue;
  if (description !== undefined) parameter.description = description;
  if (enumValues !== undefined) parameter.enum = enumValues;
  if (items !== undefined) parameter.items = items;
  if (properties !== undefined) parameter.properties = properties;
  if (profileKey !== undefined) parameter.profile_key = profileKey;
  if (configKey !== undefined) parameter.config_key = configKey;
  if (systemKey !== undefined) parameter.system_key = systemKey;
  if (confirm !== undefined) parameter.confirm_if_uncertain = confirm;
  return parameter;
}

/** Flags every name used twice, at the path of each later use. */
export function reportDuplicates(entries: { id: string; path: string }[], what: string, issues: IssueList): void {
  const first = new Map<string, string>();
  for (const entry of entries) {
    const earlier = first.get(entry.id);
    if (earlier !== undefined) issues.error(entry.path, `duplicate ${what} "${entry.id}" (first defined at ${earlier})`);
    else first.set(entry.id, entry.path);
  }
}

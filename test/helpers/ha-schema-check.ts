// What Home Assistant's MCP client would make of a tool's inputSchema. Its integration
// (homeassistant/components/mcp/coordinator.py) passes every inputSchema to voluptuous-openapi's
// convert_to_voluptuous and fails the whole server (UpdateFailed) on ANY exception from one of them.
// The rules below follow that converter (home-assistant-libs/voluptuous-openapi, voluptuous_openapi/
// __init__.py) in every release since convert_to_voluptuous exists: 0.0.6 (Jan 2025), 0.0.7, 0.1.0
// (May 2025), 0.2.0 (Aug 2025), 0.3.0 (Dec 2025), 0.4.0/0.4.1 (Jun 2026). Home Assistant pinned 0.0.5
// in 2024.11, 0.2.0 in 2026.3 and 0.4.1 from 2026.7. A schema passes only if every one of those
// releases converts it. Each problem names the rule and the releases it comes from. Patterns are
// collected so the caller can compile them with Python's `re`, as the converter does.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { isPlainObject } from '../../src/kit/plain-object.js';

export interface SchemaReport {
  problems: string[];
  patterns: string[];
}

const KNOWN_TYPES = new Set(['string', 'integer', 'number', 'boolean', 'object', 'array']);

export function haSchemaReport(schema: unknown): SchemaReport {
  const report: SchemaReport = { problems: [], patterns: [] };
  check(schema, '', report);
  return report;
}

function check(node: unknown, path: string, report: SchemaReport): void {
  const at = path || '/';
  const problem = (message: string): void => void report.problems.push(`${at}: ${message}`);
  // convert_to_voluptuous: `if not isinstance(schema, dict): raise ValueError("Invalid schema, expected a dictionary")` (every version).
  if (!isPlainObject(node)) return problem('not a JSON object: "Invalid schema, expected a dictionary" (every version)');
  // $ref is resolved (LazySchema) only from 0.4.0; before, the node is read without it and usually lacks a type.
  if ('$ref' in node) problem('$ref: resolved only by voluptuous-openapi >= 0.4.0');
  if ('$defs' in node || 'definitions' in node) problem('$defs/definitions: only meaningful with $ref, which older converters do not resolve');
  // 0.4.x reads enum first: `if not isinstance(enum_values, list): raise ValueError("Invalid schema, enum should be a list")`.
  if ('enum' in node && !Array.isArray(node.enum)) problem('enum is not a list (0.4.x raises)');
  // OPENAPI_UNSUPPORTED_KEYWORDS: {allOf, multipleOf, uniqueItems} in every version; anyOf until 0.0.7
  // (0.1.0 added anyOf); minItems/maxItems until 0.2.0 (0.3.0 added them). Raises "<keyword> is not supported".
  for (const keyword of ['allOf', 'multipleOf', 'uniqueItems']) if (keyword in node) problem(`${keyword}: "is not supported" (every version)`);
  if ('anyOf' in node) problem('anyOf: "is not supported" before voluptuous-openapi 0.1.0');
  for (const keyword of ['minItems', 'maxItems'])
    if (keyword in node) problem(`${keyword}: "is not supported" before voluptuous-openapi 0.3.0 (so by Home Assistant 2026.3)`);
  // Empty keyword schemas that say nothing; 0.4.x converts a dict additionalProperties, so {} fails with "missing type".
  if (isPlainObject(node.additionalProperties)) problem('additionalProperties is a schema: converted by 0.4.x ({} → "missing type"), ignored before');
  if ('propertyNames' in node && isPlainObject(node.propertyNames) && Object.keys(node.propertyNames).length === 0) problem('empty propertyNames');
  if ('nullable' in node && typeof node.nullable !== 'boolean') problem('nullable must be a boolean');
  // oneOf is converted first and returns vol.Any of its branches (every version): the branches must convert.
  if ('oneOf' in node) {
    if (!Array.isArray(node.oneOf)) return problem('oneOf is not a list: "Invalid schema, oneOf should be a list"');
    node.oneOf.forEach((branch, i) => {
      check(branch, `${path}/oneOf/${i}`, report);
    });
    return;
  }
  const type = node.type;
  // `if (schema_type := schema.get("type")) is None: raise ValueError("Invalid schema, missing type")` (every version).
  if (type === undefined || type === null) return problem('no type: "Invalid schema, missing type" (every version)');
  // Type lists are read from 0.2.0; before, TYPES_MAP_REV.get(list) raises TypeError (unhashable).
  if (Array.isArray(type)) return problem('type is a list: read only from voluptuous-openapi 0.2.0, a TypeError before');
  // `type: "null"` is read from 0.1.0; before it ends in "Unable to convert schema".
  if (type === 'null') return problem('type null: "Unable to convert schema" before voluptuous-openapi 0.1.0');
  if (typeof type !== 'string' || !KNOWN_TYPES.has(type)) return problem(`type ${JSON.stringify(type)}: "Unable to convert schema" (every version)`);
  if (type === 'string') {
    // `vol.Match(re.compile(pattern))`: the pattern must compile with Python's re.
    if (typeof node.pattern === 'string') report.patterns.push(node.pattern);
    // `format: date-time` becomes vol.Datetime(), which accepts only "%Y-%m-%dT%H:%M:%S.%fZ": most ISO 8601 values from a model fail.
    if (node.format === 'date-time') problem('format date-time: validated by vol.Datetime() with one fixed layout');
  }
  if (type === 'object') {
    if (node.properties !== undefined && !isPlainObject(node.properties)) problem('properties is not an object');
    if (node.required !== undefined && (!Array.isArray(node.required) || node.required.some((r) => typeof r !== 'string')))
      problem('required is not a list of names');
    for (const [name, value] of Object.entries(isPlainObject(node.properties) ? node.properties : {})) check(value, `${path}/properties/${name}`, report);
  }
  if (type === 'array') {
    // `convert_to_voluptuous(schema["items"])`: a KeyError without items (every version).
    if (!('items' in node)) return problem('array without items: KeyError "items" (every version)');
    check(node.items, `${path}/items`, report);
  }
}

/** The patterns Python's `re` refuses to compile (the converter wraps each in vol.Match(re.compile(...))). */
export async function patternsPythonRejects(patterns: string[]): Promise<string[]> {
  if (patterns.length === 0) return [];
  const script = [
    'import json, re, sys',
    'bad = []',
    'for p in json.loads(sys.argv[1]):',
    '    try:',
    '        re.compile(p)',
    '    except Exception:',
    '        bad.append(p)',
    'print(json.dumps(bad))',
  ].join('\n');
  const { stdout } = await promisify(execFile)('/usr/bin/python3', ['-c', script, JSON.stringify(patterns)]);
  return JSON.parse(stdout) as string[];
}

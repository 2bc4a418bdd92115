// Generates src/protocol/wire-types.generated.ts from the JSON Schemas in topics/schemas, so the payload
// types the code compiles against are the contract itself. Run with `npm run gen:types`; a test fails
// when the committed file differs from what this produces.
//
// Conventions of the generation (the schemas stay plain JSON Schema, readable by any tool):
// - a schema's `title` names its type; a `$defs` entry referenced elsewhere gets the name WIRE_NAMES gives;
// - an object schema without `properties` is a JsonObject, a schema without `type` any JsonValue;
// - `true` as a schema, and an array without `items`, hold any JsonValue;
// - objects that allow extra keys get an index signature (of JsonValue) only when they say
//   `additionalProperties` (absent, the schema allows them but the type does not name them).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compile, type JSONSchema } from 'json-schema-to-typescript';
import { findPackageRoot } from '../src/kit/package-root.js';

/** Schema file (without .schema.json) and optional JSON Pointer → exported type name. */
/**
 * `loose`: a message whose extra parts the Core reads as unknown input (a descriptor in any dialect); there
 * objects without properties are `object` and untyped values `unknown`, so any typed value may be sent.
 */
const WIRE_TYPES: { file: string; pointer?: string; name: string; loose?: boolean }[] = [
  { file: 'common', pointer: '/$defs/parameter_type', name: 'ParameterType' },
  { file: 'common', pointer: '/$defs/plugin_type', name: 'PluginType' },
  { file: 'common', pointer: '/$defs/plugin_source', name: 'PluginSource' },
  { file: 'common', pointer: '/$defs/system_key', name: 'SystemKey' },
  { file: 'common', pointer: '/$defs/error_code', name: 'ErrorCode' },
  { file: 'common', pointer: '/$defs/validation_issue', name: 'ValidationIssue' },
  { file: 'descriptor', pointer: '/$defs/parameter', name: 'ParameterSpec' },
  { file: 'descriptor', pointer: '/$defs/capability', name: 'CapabilitySpec' },
  { file: 'descriptor', pointer: '/$defs/plugin_config', name: 'PluginConfig' },
  { file: 'descriptor', name: 'PluginDescriptor' },
  { file: 'register', name: 'RegisterMessage', loose: true },
  { file: 'registration-ack', name: 'RegistrationAck' },
  { file: 'unregister', name: 'UnregisterMessage' },
  { file: 'plugin-status', name: 'PluginStatusMessage' },
  { file: 'heartbeat', name: 'HeartbeatMessage' },
  { file: 'core-status', name: 'CoreStatusMessage' },
  { file: 'control', name: 'ControlMessage' },
  { file: 'plugin-request', name: 'PluginRequest' },
  { file: 'plugin-result', name: 'PluginResult' },
  { file: 'plugin-notify', name: 'PluginNotifyMessage' },
  { file: 'plugin-notify-ack', name: 'PluginNotifyAck' },
  { file: 'channel-message-in', name: 'ChannelMessageIn' },
  { file: 'channel-message-out', name: 'ChannelMessageOut' },
  { file: 'call-request', name: 'CallRequest' },
  { file: 'call-rejection', name: 'CallRejection' },
  { file: 'ha-core-state', name: 'HaCoreState' },
  { file: 'ha-plugin-state', name: 'HaPluginState' },
];

type Schema = Record<string, unknown>;

function readSchema(dir: string, file: string): Schema {
  return JSON.parse(readFileSync(join(dir, `${file}.schema.json`), 'utf8')) as Schema;
}

function at(schema: Schema, pointer: string | undefined): Schema {
  if (!pointer) return schema;
  return pointer
    .split('/')
    .slice(1)
    .reduce<Schema>((node, key) => node[key] as Schema, schema);
}

/** The type name a $ref points at, when that target has a name of its own. */
function refName(ref: string, currentFile: string): string | undefined {
  const [filePart, pointer] = ref.split('#');
  const file = filePart ? filePart.replace(/\.schema\.json$/, '') : currentFile;
  return WIRE_TYPES.find((t) => t.file === file && (t.pointer ?? '') === (pointer ?? ''))?.name;
}

/**
 * A copy of `node` ready for the compiler: named references become tsType names, every other reference is
 * inlined, and the JSON conventions above are applied.
 */
function prepare(node: unknown, dir: string, currentFile: string, loose: boolean, isRoot = false): unknown {
  const anyObject = loose ? 'object' : 'JsonObject';
  const anyValue = loose ? 'unknown' : 'JsonValue';
  if (Array.isArray(node)) return node.map((item) => prepare(item, dir, currentFile, loose));
  if (node === true) return { tsType: anyValue };
  if (node === null || typeof node !== 'object') return node;
  const schema = node as Schema;
  if (typeof schema.$ref === 'string') {
    const name = refName(schema.$ref, currentFile);
    const rest = { ...schema };
    delete rest.$ref;
    if (name) return { ...rest, tsType: name };
    const [filePart, pointer] = schema.$ref.split('#');
    const file = filePart ? filePart.replace(/\.schema\.json$/, '') : currentFile;
    return { ...(prepare(at(readSchema(dir, file), pointer), dir, file, loose) as Schema), ...rest };
  }
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$defs' || key === '$schema' || key === '$id') continue;
    if (key === 'title' && !isRoot) continue;
    if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, prepare(v, dir, currentFile, loose)]));
    } else out[key] = prepare(value, dir, currentFile, loose);
  }
  if (out.additionalProperties === true) out.additionalProperties = { tsType: anyValue };
  if (out.type === 'array' && out.items === undefined) out.items = { tsType: anyValue };
  if (!isRoot && out.type === 'object' && out.properties === undefined && out.additionalProperties === undefined) return { ...out, tsType: anyObject };
  if (
    !isRoot &&
    out.type === undefined &&
    out.enum === undefined &&
    out.const === undefined &&
    out.tsType === undefined &&
    !out.anyOf &&
    !out.oneOf &&
    !out.allOf
  ) {
    return { ...out, tsType: anyValue };
  }
  return out;
}

/**
 * The compiler writes an index signature as the union of every property's type and the extra keys' type;
 * the properties' types are members of the latter, so the signature is that type (or undefined).
 */
function collapseIndexSignatures(code: string): string {
  const marker = '\n  [k: string]:';
  let out = '';
  let from = 0;
  for (let at = code.indexOf(marker); at !== -1; at = code.indexOf(marker, from)) {
    // The signature ends at the first ';' outside nested braces.
    let depth = 0;
    let end = at + marker.length;
    for (; end < code.length; end++) {
      const ch = code[end];
      if (ch === '{') depth++;
      else if (ch === '}') depth--;
      else if (ch === ';' && depth === 0) break;
    }
    const union = code.slice(at + marker.length, end);
    const type = /\bJsonValue\b/.test(union) ? 'JsonValue | undefined' : /\bunknown\b/.test(union) ? 'unknown' : union.trim();
    out += `${code.slice(from, at)}${marker} ${type};`;
    from = end + 1;
  }
  return out + code.slice(from);
}

export async function generateWireTypes(root: string = findPackageRoot()): Promise<string> {
  const dir = join(root, 'topics', 'schemas');
  const parts: string[] = [
    '// Generated by scripts/gen-wire-types.ts from topics/schemas: do not edit; run `npm run gen:types`.',
    '/* eslint-disable */',
    '',
    'export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };',
    'export type JsonObject = { [key: string]: JsonValue };',
    '',
  ];
  for (const { file, pointer, name, loose = false } of WIRE_TYPES) {
    const source = readSchema(dir, file);
    const schema = { ...(prepare(at(source, pointer), dir, file, loose, true) as Schema), title: name };
    const code = await compile(schema as JSONSchema, name, {
      bannerComment: '',
      additionalProperties: false,
      declareExternallyReferenced: false,
      format: true,
      style: { singleQuote: true, printWidth: 140 },
      strictIndexSignatures: false,
      ignoreMinAndMaxItems: true,
      unknownAny: true,
    });
    parts.push(collapseIndexSignatures(code.trim()), '');
  }
  return parts.join('\n');
}

export const WIRE_TYPES_FILE = join('src', 'protocol', 'wire-types.generated.ts');

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = findPackageRoot();
  writeFileSync(join(root, WIRE_TYPES_FILE), await generateWireTypes(root));
  console.log(`wrote ${WIRE_TYPES_FILE}`);
}

// Loads the JSON Schemas of topics/schemas at run time and compiles them once: the files are the single
// source of truth for every payload, for the Core, the SDK and the HTTP API alike.
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { topicsDir } from '../kit/package-root.js';
import type { JsonObject } from './types.js';
import { isPlainObject } from '../kit/plain-object.js';

export const SCHEMA_FILES = {
  common: 'common.schema.json',
  descriptor: 'descriptor.schema.json',
  register: 'register.schema.json',
  'registration-ack': 'registration-ack.schema.json',
  unregister: 'unregister.schema.json',
  'plugin-status': 'plugin-status.schema.json',
  heartbeat: 'heartbeat.schema.json',
  'core-status': 'core-status.schema.json',
  control: 'control.schema.json',
  'plugin-request': 'plugin-request.schema.json',
  'plugin-result': 'plugin-result.schema.json',
  'plugin-notify': 'plugin-notify.schema.json',
  'plugin-notify-ack': 'plugin-notify-ack.schema.json',
  'channel-message-in': 'channel-message-in.schema.json',
  'channel-message-out': 'channel-message-out.schema.json',
  event: 'event.schema.json',
  'zigbee2mqtt-devices': 'zigbee2mqtt-devices.schema.json',
  'zigbee2mqtt-event': 'zigbee2mqtt-event.schema.json',
  'zigbee2mqtt-online-state': 'zigbee2mqtt-online-state.schema.json',
  'zigbee2mqtt-device-state': 'zigbee2mqtt-device-state.schema.json',
  'zigbee2mqtt-set': 'zigbee2mqtt-set.schema.json',
  'zigbee2mqtt-get': 'zigbee2mqtt-get.schema.json',
  'call-request': 'call-request.schema.json',
  'call-rejection': 'call-rejection.schema.json',
  'ha-core-state': 'ha-core-state.schema.json',
  'ha-plugin-state': 'ha-plugin-state.schema.json',
  'ha-button-press': 'ha-button-press.schema.json',
  'ha-status': 'ha-status.schema.json',
  'ha-device-discovery': 'ha-device-discovery.schema.json',
} as const;

export type SchemaName = keyof typeof SCHEMA_FILES;
export const SCHEMA_NAMES = Object.keys(SCHEMA_FILES) as SchemaName[];

export interface SchemaStore {
  /** The directory the schemas were read from. */
  readonly dir: string;
  /** The compiled validator of one schema (compiled once, at load). */
  validator(name: SchemaName): ValidateFunction;
  /**
   * The validator of a part of one schema, by JSON Pointer (e.g. '/$defs/device'), compiled on first use:
   * lets a list be checked entry by entry so one bad entry does not reject the others.
   */
  validatorAt(name: SchemaName, pointer: string): ValidateFunction;
  /** A deep copy of one schema as a plain object. */
  schema(name: SchemaName): JsonObject;
  /** Deep copies of every schema keyed by name, e.g. for fastify's addSchema / OpenAPI components. */
  all(): Record<SchemaName, JsonObject>;
}

// ajv-formats is CommonJS with a default export; under NodeNext the callable sits on .default.
type AddFormats = (ajv: Ajv2020) => Ajv2020;
const addFormats: AddFormats = (addFormatsModule as unknown as { default?: AddFormats }).default ?? (addFormatsModule as unknown as AddFormats);

/** A fresh ajv for protocol schemas: draft 2020-12, every error reported, formats such as uri known. */
export function createProtocolAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false });
  addFormats(ajv);
  return ajv;
}

export function loadSchemaStore(dir: string = join(topicsDir(), 'schemas')): SchemaStore {
  const raw = new Map<SchemaName, JsonObject>();
  const ajv = createProtocolAjv();
  for (const name of SCHEMA_NAMES) {
    const file = join(dir, SCHEMA_FILES[name]);
    if (!existsSync(file)) throw new Error(`protocol schema ${name} is missing: ${file}`);
    const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (!isPlainObject(parsed)) {
      throw new Error(`protocol schema ${file} is not a JSON object`);
    }
    raw.set(name, parsed as JsonObject);
    ajv.addSchema(parsed as JsonObject);
  }
  const compiled = new Map<SchemaName, ValidateFunction>();
  for (const name of SCHEMA_NAMES) {
    const id = raw.get(name)?.['$id'];
    if (typeof id !== 'string') throw new Error(`protocol schema ${name} has no $id`);
    const validate = ajv.getSchema(id);
    if (!validate) throw new Error(`protocol schema ${name} did not compile`);
    compiled.set(name, validate);
  }
  const copy = (name: SchemaName): JsonObject => structuredClone(raw.get(name) as JsonObject);
  const validatorAt = (name: SchemaName, pointer: string): ValidateFunction => {
    const ref = `${String(raw.get(name)?.['$id'])}#${pointer}`;
    const validate = ajv.getSchema(ref);
    if (!validate) throw new Error(`protocol schema ${name} has nothing at ${pointer}`);
    return validate;
  };
  return {
    dir,
    validator: (name) => compiled.get(name) as ValidateFunction,
    validatorAt,
    schema: copy,
    all: () => Object.fromEntries(SCHEMA_NAMES.map((name) => [name, copy(name)])) as Record<SchemaName, JsonObject>,
  };
}

// validatePayload(kind, value) is a plain function by contract, so the compiled schemas are cached per
// process. They are immutable data read from files shipped with the package, not mutable state.
let cachedStore: SchemaStore | undefined;

export function protocolSchemas(): SchemaStore {
  cachedStore ??= loadSchemaStore();
  return cachedStore;
}

export function getSchemaValidator(name: SchemaName): ValidateFunction {
  return protocolSchemas().validator(name);
}

export function getSchemaValidatorAt(name: SchemaName, pointer: string): ValidateFunction {
  return protocolSchemas().validatorAt(name, pointer);
}

/** The canonical descriptor schema as a plain object. */
export function descriptorSchema(): JsonObject {
  return protocolSchemas().schema('descriptor');
}

/** Every protocol schema as a plain object keyed by name (each carries its $id; refs are relative to it). */
export function allProtocolSchemas(): Record<SchemaName, JsonObject> {
  return protocolSchemas().all();
}

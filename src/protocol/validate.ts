// Entry checks for every payload that crosses the bus: size, JSON, object shape, then the topic's schema.
import type { ErrorObject } from 'ajv';
import { getSchemaValidator, getSchemaValidatorAt, type SchemaName } from './schemas.js';
import type { TopicKind, TopicPayloads } from './topics.js';
import type { ValidationIssue } from './types.js';
import { errorMessage } from '../kit/error-message.js';
import { isPlainObject } from '../kit/plain-object.js';
import { nestsDeeperThan } from '../kit/json-depth.js';
import { explainPrototypeKey, findPrototypeKey, mayHoldPrototypeKey } from '../kit/prototype-keys.js';
import { MAX_JSON_DEPTH } from './limits.js';

export type Validated<T> = { ok: true; value: T } | { ok: false; errors: ValidationIssue[] };

/** Which schema file describes the payload of each topic kind. */
export const TOPIC_SCHEMAS: Record<TopicKind, SchemaName> = {
  'core/status': 'core-status',
  register: 'register',
  registered: 'registration-ack',
  unregister: 'unregister',
  status: 'plugin-status',
  heartbeat: 'heartbeat',
  invoke: 'plugin-request',
  result: 'plugin-result',
  control: 'control',
  notify: 'plugin-notify',
  notified: 'plugin-notify-ack',
  'channel/in': 'channel-message-in',
  'channel/out': 'channel-message-out',
  event: 'event',
  call: 'call-request',
  'call/result': 'plugin-result',
  'call/invalid': 'call-rejection',
  'ha/core-state': 'ha-core-state',
  'ha/plugin-state': 'ha-plugin-state',
  'ha/press': 'ha-button-press',
  'ha/discovery': 'ha-device-discovery',
  'ha/status': 'ha-status',
};

/**
 * Validates a payload against its JSON Schema from topics/schemas. For 'register' this checks the
 * liveness envelope and the broad dialect shape; normalizeDescriptor (or parseRegisterMessage) checks
 * the descriptor itself.
 */
export function validatePayload<K extends TopicKind>(kind: K, value: unknown): Validated<TopicPayloads[K]> {
  return validateWithSchema<TopicPayloads[K]>(TOPIC_SCHEMAS[kind], value);
}

export function validateWithSchema<T>(name: SchemaName, value: unknown): Validated<T> {
  const validate = getSchemaValidator(name);
  if (validate(value)) return { ok: true, value: value as T };
  return { ok: false, errors: ajvErrorsToIssues(validate.errors ?? []) };
}

/** Validates a value against a part of a schema (a JSON Pointer into it, e.g. '/$defs/device'). */
export function validateWithSchemaAt<T>(name: SchemaName, pointer: string, value: unknown): Validated<T> {
  const validate = getSchemaValidatorAt(name, pointer);
  if (validate(value)) return { ok: true, value: value as T };
  return { ok: false, errors: ajvErrorsToIssues(validate.errors ?? []) };
}

/** Parses a JSON payload; refuses payloads over maxBytes and anything that is not a JSON object. */
export function parseJsonPayload(payload: Buffer | string, maxBytes: number): Validated<Record<string, unknown>> {
  const size = typeof payload === 'string' ? Buffer.byteLength(payload, 'utf8') : payload.length;
  if (size > maxBytes) {
    return { ok: false, errors: [{ path: '', message: `payload is ${size} bytes; the limit is ${maxBytes}` }] };
  }
  const text = typeof payload === 'string' ? payload : payload.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const reason = errorMessage(error);
    return { ok: false, errors: [{ path: '', message: `payload is not valid JSON: ${reason}` }] };
  }
  if (!isPlainObject(parsed)) {
    return { ok: false, errors: [{ path: '', message: 'payload must be a JSON object' }] };
  }
  if (nestsDeeperThan(parsed, MAX_JSON_DEPTH)) {
    return { ok: false, errors: [{ path: '', message: `payload is nested deeper than ${MAX_JSON_DEPTH} levels of objects and arrays` }] };
  }
  const prototypeKey = mayHoldPrototypeKey(text) ? findPrototypeKey(parsed) : undefined;
  if (prototypeKey !== undefined) {
    return { ok: false, errors: [{ path: prototypeKey, message: `payload has ${explainPrototypeKey(prototypeKey)}` }] };
  }
  return { ok: true, value: parsed as Record<string, unknown> };
}

/** How ajvErrorsToIssues words a rule; by default without naming the value (the issue's path names it). */
export interface IssueWording {
  describe(error: ErrorObject): string;
  /** A bad key name (propertyNames) gets the key's own path, reported once rather than also for its object. */
  keyPaths?: boolean;
}

/** Turns ajv errors into issues whose path names the offending value itself (missing keys included). */
export function ajvErrorsToIssues(errors: readonly ErrorObject[], wording: IssueWording = { describe: plainRule }): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (wording.keyPaths && error.keyword === 'propertyNames') continue;
    const path =
      wording.keyPaths && typeof error.propertyName === 'string' ? `${error.instancePath}/${escapePointer(error.propertyName)}` : ajvIssuePath(error);
    const issue = { path, message: wording.describe(error) };
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

/** The JSON Pointer of the offending value: a missing or unknown key is named itself. */
export function ajvIssuePath(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params['missingProperty'] === 'string') {
    return `${error.instancePath}/${escapePointer(params['missingProperty'])}`;
  }
  if (error.keyword === 'additionalProperties' && typeof params['additionalProperty'] === 'string') {
    return `${error.instancePath}/${escapePointer(params['additionalProperty'])}`;
  }
  return error.instancePath;
}

/** The rule an ajv error reports, without naming the value (the issue's path names it). */
function plainRule(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params['missingProperty'] === 'string') return 'is required';
  if (error.keyword === 'additionalProperties' && typeof params['additionalProperty'] === 'string') return 'is not an allowed property';
  if (error.keyword === 'enum' && Array.isArray(params['allowedValues'])) {
    return `must be one of: ${params['allowedValues'].map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return error.message ?? `fails ${error.keyword}`;
}

export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The same problem reported by two checks (envelope and descriptor) is listed once. */
export function dedupeIssues(issues: ValidationIssue[]): ValidationIssue[] {
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.path}|${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

// Route schemas validate what they describe. Each route that takes input declares one schema per part
// (body, querystring, params) with `validatedRoute`; fastify checks the request against it before the
// handler runs, and a refusal is answered with every problem in the error body of errors.ts, each named
// by its JSON Pointer and worded with the field and the rule it broke (the route's own error handler
// does this, so the route answers the same on any fastify instance; the server's error handler words a
// schema of any other route the same way).
//
// Bodies are checked as sent: no type coercion ("true" is not a boolean), no stripping of unknown
// fields (they are refused), no injected defaults. Query strings arrive as text, so their numbers and
// booleans are coerced; path parameters are always text.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifyError, FastifyReply, FastifyRequest, FastifySchema, FastifySchemaCompiler, RouteShorthandOptions } from 'fastify';
import { ajvErrorsToIssues } from '../protocol/validate.js';
import type { ValidationIssue } from '../protocol/types.js';
import { errorBody } from './errors.js';
import { parsePointInTime } from '../access/time-window.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The sentence of the 400 answer when the route's schema refuses a request (e.g. "invalid message"). */
    invalid?: Invalid;
  }
}

/** The sentence of a refusal: one for the route, or one per part (e.g. the path's and the body's), or one made from the problems. */
export type Invalid = string | { [part in (typeof VALIDATED_PARTS)[number]]?: string | ((problems: ValidationIssue[]) => string) };

/** A refusal's sentence that is its problems, e.g. "limit must be at least 1, got 0; unknown field \"x\"". */
export const listProblems = (problems: ValidationIssue[]): string => problems.map((problem) => problem.message).join('; ');

/** The parts of a request a route schema can check. */
export type RouteParts = Pick<FastifySchema, 'body' | 'querystring' | 'params'>;
export const VALIDATED_PARTS = ['body', 'querystring', 'params'] as const;

const common = { allErrors: true, verbose: true, strict: false, removeAdditional: false, useDefaults: false } as const;
const asSent = new Ajv({ ...common, coerceTypes: false });
const fromText = new Ajv({ ...common, coerceTypes: true });

/** Formats a route schema may name, and how a refusal describes each. */
const FORMATS: Record<string, { test: (text: string) => boolean; says: string }> = {
  'point-in-time': {
    test: (text) => parsePointInTime(text).ok,
    says: 'a duration ago (30m, 1h, 7d), an ISO date or date-time, or epoch milliseconds',
  },
};
for (const ajv of [asSent, fromText]) for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate: format.test });

/** Compiles a route schema: query strings with coercion from text, everything else as sent. */
export const routeValidatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'querystring' ? fromText : asSent).compile(schema as object) as ValidateFunction;

/**
 * Route options that make fastify validate `parts` and answer a refused request with 400 `invalid` and
 * every problem. `extra` (e.g. USER_ROUTE) is merged in; its config is kept. Any other failure of the
 * route goes on to the server's error handler.
 */
export function validatedRoute(parts: RouteParts, invalid: Invalid, extra: { config?: object } = {}): RouteShorthandOptions {
  return {
    ...extra,
    schema: parts,
    validatorCompiler: routeValidatorCompiler,
    config: { ...(extra.config ?? {}), invalid },
    errorHandler: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      if (!error.validation) throw error;
      const part = error.validationContext ?? 'body';
      const problems = routeProblems(error.validation as ErrorObject[], part);
      const sentence = typeof invalid === 'string' ? invalid : (invalid[part as keyof typeof invalid] ?? `invalid ${SUBJECT[part] ?? part}`);
      const message = typeof sentence === 'string' ? sentence : sentence(problems);
      request.log.info({ path: request.url, status: 400, problems }, 'HTTP request rejected');
      return reply.code(400).send(errorBody(400, message, problems));
    },
  };
}

const SUBJECT: Record<string, string> = { body: 'the body', querystring: 'the query string', params: 'the path' };

const checkers = new WeakMap<object, ValidateFunction>();

/**
 * The problems of `value` against `schema`, worded like a refused route's, for a handler that checks a
 * part of its input itself (merging them with problems only it can find, or answering in another
 * protocol's error shape). Checked as sent: no coercion, no stripping, no defaults.
 */
export function schemaProblems(schema: object, value: unknown, part = 'body'): ValidationIssue[] {
  let validate = checkers.get(schema);
  if (!validate) {
    validate = asSent.compile(schema);
    checkers.set(schema, validate);
  }
  return validate(value) ? [] : routeProblems(validate.errors ?? [], part);
}

/** Ajv's errors as problems of the error body, each naming its field and the first rule it broke. */
export function routeProblems(errors: readonly ErrorObject[], part = 'body'): ValidationIssue[] {
  const issues = ajvErrorsToIssues(errors, { describe: (error) => describeRule(error, SUBJECT[part] ?? part), keyPaths: true });
  // "" breaks both minLength 1 and a pattern; the first rule says what to fix.
  const seen = new Set<string>();
  return issues.filter((issue) => !seen.has(issue.path) && seen.add(issue.path));
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  integer: 'a whole number',
  number: 'a number',
  null: 'null',
};

const typeName = (type: unknown): string => (Array.isArray(type) ? type : [type]).map((t) => TYPE_NAMES[String(t)] ?? String(t)).join(' or ');

/** "user_id must be a non-empty string", "unknown field \"x\"", "k must be at least 1, got 0". */
function describeRule(error: ErrorObject, subject: string): string {
  const params = error.params as Record<string, unknown>;
  const at = error.instancePath.slice(1).replace(/~1/g, '/').replace(/~0/g, '~');
  const field = at === '' ? subject : at;
  const shown = JSON.stringify(error.data);
  const got = shown === undefined ? '' : `, got ${shown.length > 60 ? `${shown.slice(0, 57)}...` : shown}`;
  const parent = (error.parentSchema ?? {}) as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${at === '' ? '' : `${at}/`}${String(params['missingProperty'])} is required`;
    case 'additionalProperties': {
      if (subject !== SUBJECT['querystring']) return `unknown field "${String(params['additionalProperty'])}"`;
      const known = Object.keys((parent['properties'] ?? {}) as object);
      return `unknown parameter "${String(params['additionalProperty'])}"${known.length > 0 ? `; use ${known.join(', ')}` : ''}`;
    }
    case 'type':
      // A query string names a parameter twice to send a list.
      if (subject === SUBJECT['querystring'] && Array.isArray(error.data)) return `give ${field} once`;
      return `${field} must be ${typeName(params['type'])}${Array.isArray(error.data) || typeof error.data === 'object' ? '' : got}`;
    case 'format':
      return `${field} must be ${FORMATS[String(params['format'])]?.says ?? `a ${String(params['format'])}`}${got}`;
    case 'minLength':
      return params['limit'] === 1 ? `${field} must be a non-empty string` : `${field} must be at least ${String(params['limit'])} characters`;
    case 'maxLength':
      return `${field} must be at most ${String(params['limit'])} characters`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum': {
      if (typeof parent['minimum'] === 'number' && typeof parent['maximum'] === 'number') {
        return `${field} must be ${typeName(parent['type'] ?? 'number')} between ${parent['minimum']} and ${parent['maximum']}${got}`;
      }
      const bound = error.keyword.includes('inimum') ? 'at least' : 'at most';
      return `${field} must be ${error.keyword.startsWith('exclusive') ? String(params['comparison']) : bound} ${String(params['limit'])}${got}`;
    }
    case 'enum':
      return `${field} must be one of ${(params['allowedValues'] as unknown[]).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`;
    case 'const':
      return `${field} must be ${JSON.stringify(params['allowedValue'])}`;
    case 'pattern':
      return error.propertyName !== undefined
        ? `${at === '' ? 'key' : `${at} key`} "${error.propertyName}" must match ${String(params['pattern'])}`
        : `${field} must match ${String(params['pattern'])}`;
    case 'minItems':
      return `${field} must have at least ${String(params['limit'])} item${params['limit'] === 1 ? '' : 's'}`;
    case 'maxItems':
      return `${field} must have at most ${String(params['limit'])} items`;
    default:
      return `${field} ${error.message ?? `fails ${error.keyword}`}`;
  }
}

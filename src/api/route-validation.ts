// Route schemas validate what they describe. Each route that takes input declares one schema per part
// (body, querystring, params) with `validatedRoute`; fastify checks the request against it before the
// handler runs, and the server's error handler answers with every problem in the error body of
// errors.ts, each named by its JSON Pointer and worded with the field and the rule it broke.
//
// Bodies are checked as sent: no type coercion ("true" is not a boolean), no stripping of unknown
// fields (they are refused), no injected defaults. Query strings arrive as text, so their numbers and
// booleans are coerced; path parameters are always text.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifyError, FastifyReply, FastifyRequest, FastifySchema, FastifySchemaCompiler, RouteShorthandOptions } from 'fastify';
import { ajvErrorsToIssues } from '../protocol/validate.js';
import type { ValidationIssue } from '../protocol/types.js';
import { errorBody } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The sentence of the 400 answer when the route's schema refuses a request (e.g. "invalid message"). */
    invalid?: Invalid;
  }
}

/** The sentence of a refusal: one for the route, or one per part (e.g. the path's and the body's). */
export type Invalid = string | { [part in (typeof VALIDATED_PARTS)[number]]?: string };

/** The parts of a request a route schema can check. */
export type RouteParts = Pick<FastifySchema, 'body' | 'querystring' | 'params'>;
export const VALIDATED_PARTS = ['body', 'querystring', 'params'] as const;

const common = { allErrors: true, verbose: true, strict: false, removeAdditional: false, useDefaults: false } as const;
const asSent = new Ajv({ ...common, coerceTypes: false });
const fromText = new Ajv({ ...common, coerceTypes: true });

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
      const message = typeof invalid === 'string' ? invalid : (invalid[part as keyof typeof invalid] ?? `invalid ${SUBJECT[part] ?? part}`);
      request.log.info({ path: request.url, status: 400, problems }, 'HTTP request rejected');
      return reply.code(400).send(errorBody(400, message, problems));
    },
  };
}

const SUBJECT: Record<string, string> = { body: 'the body', querystring: 'the query string', params: 'the path' };

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
  const got = error.data === undefined ? '' : `, got ${JSON.stringify(error.data)}`;
  const parent = (error.parentSchema ?? {}) as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${at === '' ? '' : `${at}/`}${String(params['missingProperty'])} is required`;
    case 'additionalProperties':
      return `unknown field "${String(params['additionalProperty'])}"`;
    case 'type':
      return `${field} must be ${typeName(params['type'])}`;
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

// Errors of the OpenAI-compatible endpoint in OpenAI's own shape, {error: {message, type, param, code}},
// so every OpenAI client library turns them into its usual exceptions (401 → AuthenticationError,
// 403 → PermissionDeniedError, 404 → NotFoundError, 413/400 → BadRequestError...).
import type { ErrorObject } from 'ajv';
import type { FastifyReply } from 'fastify';
import { routeProblems } from '../api/route-validation.js';

export type OpenAiErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'server_error' | 'requests';

export interface OpenAiErrorBody {
  error: { message: string; type: OpenAiErrorType; param: string | null; code: string | null };
}

export class OpenAiRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
    readonly type: OpenAiErrorType = 'invalid_request_error',
  ) {
    super(message);
  }

  body(): OpenAiErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export function sendOpenAiError(reply: FastifyReply, error: OpenAiRequestError): FastifyReply {
  return reply.code(error.status).header('cache-control', 'no-store').send(error.body());
}

/** The answer to a request without a valid token: OpenAI answers 401 invalid_api_key the same way. */
export function unauthorizedError(presented: boolean): OpenAiRequestError {
  const message = presented
    ? 'Incorrect API key provided: use the HomeClaw admin token or a user token (homeclaw users add <id>) as the API key.'
    : 'You did not provide an API key: send the HomeClaw admin token or a user token (homeclaw users add <id>) as "Authorization: Bearer <token>".';
  return new OpenAiRequestError(401, message, null, 'invalid_api_key', 'authentication_error');
}

/** fastify's own errors on this route (body limit, unparsable JSON, wrong media type) in OpenAI's shape. */
export function fromFrameworkError(error: Error & { statusCode?: number; code?: string }, maxBodyBytes: number): OpenAiRequestError {
  const status = error.statusCode ?? 500;
  if (status === 413) {
    return new OpenAiRequestError(413, `The request body is larger than ${maxBodyBytes} bytes (openai_endpoint.max_body_bytes).`, null, 'request_too_large');
  }
  if (status === 415) return new OpenAiRequestError(415, 'The request body must be JSON (Content-Type: application/json).', null, 'unsupported_media_type');
  if (status === 400) return new OpenAiRequestError(400, `We could not parse the JSON body of your request: ${error.message}`, null, 'invalid_json');
  if (status >= 400 && status < 500) return new OpenAiRequestError(status, error.message);
  return new OpenAiRequestError(500, 'The server had an error while processing your request (see the HomeClaw log).', null, null, 'server_error');
}

/** "/messages/0/content" as OpenAI names a parameter: "messages[0].content". */
function openAiParam(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((name, segment) => (/^\d+$/.test(segment) ? `${name}[${segment}]` : name === '' ? segment : `${name}.${segment}`), '');
}

/** The request's schema refused it: the first problem in OpenAI's shape (OpenAI reports one at a time). */
export function fromValidationErrors(errors: readonly ErrorObject[]): OpenAiRequestError {
  // An if/then failure is also reported by the rule inside it, which says more.
  const error = errors.find((candidate) => candidate.keyword !== 'if') ?? errors[0];
  const problem = error ? routeProblems([error])[0] : undefined;
  if (!error || !problem) return new OpenAiRequestError(400, 'The request body is invalid.', null, 'invalid_value');
  const param = openAiParam(problem.path);
  if (param === '') return new OpenAiRequestError(400, 'The request body must be a JSON object.', null, 'invalid_type');
  if (error.keyword === 'required') return new OpenAiRequestError(400, `Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
  if (error.keyword === 'type') return new OpenAiRequestError(400, `Invalid type for '${param}': ${problem.message}.`, param, 'invalid_type');
  return new OpenAiRequestError(400, `Invalid '${param}': ${problem.message}.`, param, 'invalid_value');
}

/** Over the user's message budget: OpenAI answers a request-rate limit with 429, type "requests", code rate_limit_exceeded. */
export function rateLimitedError(retryAfterSec: number): OpenAiRequestError {
  return new OpenAiRequestError(
    429,
    `Rate limit reached: too many messages from this user (conversation.max_messages_per_minute). Please try again in ${retryAfterSec}s.`,
    null,
    'rate_limit_exceeded',
    'requests',
  );
}

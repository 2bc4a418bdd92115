// Errors of the OpenAI-compatible endpoint in OpenAI's own shape, {error: {message, type, param, code}},
// so every OpenAI client library turns them into its usual exceptions (401 → AuthenticationError,
// 403 → PermissionDeniedError, 404 → NotFoundError, 413/400 → BadRequestError...).
import type { FastifyReply } from 'fastify';

export type OpenAiErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'server_error';

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

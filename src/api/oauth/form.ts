// OAuth requests arrive as application/x-www-form-urlencoded (RFC 6749 §4.1.3, the consent form). The
// parser is added only inside the OAuth routes' scope, so the rest of the API keeps accepting JSON only.
// A parameter given twice is an error (RFC 6749 §3.1): which copy counted could differ between checks.
import { InvalidRequestError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { FastifyInstance } from 'fastify';
import { isPlainObject } from '../../kit/plain-object.js';

/** A parsed form body: the parameters, and those that appeared more than once. */
export class FormBody {
  constructor(
    readonly params: Record<string, string>,
    readonly repeated: string[],
  ) {}
}

export function parseForm(text: string): FormBody {
  const params: Record<string, string> = {};
  const repeated = new Set<string>();
  for (const [key, value] of new URLSearchParams(text)) {
    if (Object.hasOwn(params, key)) repeated.add(key);
    params[key] = value;
  }
  return new FormBody(params, [...repeated]);
}

export function registerFormParser(scope: FastifyInstance, bodyLimit: number): void {
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit }, (_request, body, done) => {
    done(null, parseForm(typeof body === 'string' ? body : body.toString('utf8')));
  });
}

/**
 * The string parameters of a form body, or of a JSON object (some clients send JSON); throws
 * InvalidRequestError for anything else or a repeated parameter.
 */
export function paramsOf(body: unknown): Record<string, string> {
  if (body instanceof FormBody) {
    if (body.repeated.length > 0) throw new InvalidRequestError(`parameter ${body.repeated.map((k) => `"${k}"`).join(', ')} given more than once`);
    return body.params;
  }
  if (isPlainObject(body)) {
    const params: Record<string, string> = {};
    for (const [key, value] of Object.entries(body)) {
      if (typeof value === 'string') params[key] = value;
      else if (typeof value === 'number' || typeof value === 'boolean') params[key] = String(value);
    }
    return params;
  }
  throw new InvalidRequestError('the request body must be application/x-www-form-urlencoded parameters');
}

/** Query parameters of a GET, with the same rule about repeated parameters. */
export function queryParams(url: string): Record<string, string> {
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  return paramsOf(parseForm(query));
}

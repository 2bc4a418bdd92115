// fetch for calls to plugins, checking every URL it goes to (the first and each redirect) against the
// guard, so neither a plugin's configuration nor a redirect from its server can make the Core call its
// own HTTP API. Redirects are followed here rather than by fetch, as fetch would follow them unseen.
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { SelfTargetGuard } from './self-target.js';

/** A URL the guard refused; `redirected` tells whether a redirect led there. */
export class TargetRefusedError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
    readonly redirected: boolean,
  ) {
    super(redirected ? `was redirected to ${url}, ${reason}` : reason);
    this.name = 'TargetRefusedError';
  }
}

export interface GuardedRequestInit extends RequestInit {
  method: string;
  headers: Record<string, string>;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers that carry credentials: never sent on to another origin (as browsers and fetch do). */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];

export const MAX_REDIRECTS = 5;

async function refusal(guard: SelfTargetGuard | undefined, url: string): Promise<string | undefined> {
  if (!guard) return undefined;
  const verdict = guard.check(url);
  return verdict instanceof Promise ? await verdict : verdict;
}

/** The request to send to a redirect's target, following the fetch standard's rules. */
function redirectedInit(init: GuardedRequestInit, status: number, crossOrigin: boolean): GuardedRequestInit {
  const headers = { ...init.headers };
  let { method, body } = init;
  if (status === 303 ? method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST') {
    method = 'GET';
    body = undefined;
    for (const name of BODY_HEADERS) delete headers[name];
  }
  if (crossOrigin) for (const name of CREDENTIAL_HEADERS) delete headers[name];
  return { ...init, method, headers, body };
}

/**
 * fetch with redirects followed by hand (at most MAX_REDIRECTS), each target checked by the guard.
 * Throws TargetRefusedError for a refused URL; other errors are fetch's own.
 */
export async function guardedFetch(url: string, init: GuardedRequestInit, guard: SelfTargetGuard | undefined): Promise<Response> {
  let current = url;
  let request = init;
  for (let hop = 0; ; hop++) {
    const refused = await refusal(guard, current);
    if (refused) throw new TargetRefusedError(current, refused, hop > 0);
    const response = await fetch(current, { ...request, redirect: 'manual' });
    const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
    if (location === null) return response;
    await response.body?.cancel().catch(() => undefined);
    if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects, the last to ${location}`);
    const next = new URL(location, current);
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new Error(`redirect to a non-HTTP URL refused: ${next.protocol}`);
    request = redirectedInit(request, response.status, next.origin !== new URL(current).origin);
    current = next.toString();
  }
}

/** A fetch for clients that follow redirects themselves (the MCP SDK): each URL they ask for is checked. */
export function guardedFetchLike(guard: SelfTargetGuard): FetchLike {
  return async (url, init) => {
    const target = url.toString();
    const refused = await refusal(guard, target);
    if (refused) throw new TargetRefusedError(target, refused, false);
    return fetch(url, init);
  };
}

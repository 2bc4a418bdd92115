// Calls to the Core's HTTP API. Every URL is relative to the page (no leading slash), so the dashboard
// works under a path prefix such as Home Assistant's ingress. The token travels only in the
// Authorization header; under ingress there is none and Home Assistant's session stands in for it.
import type { PluginResult } from './types.js';

export interface Problem {
  path: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly problems: Problem[] = [],
  ) {
    super(message);
  }
}

let token: string | undefined;
let onUnauthorized: () => void = () => {};

export function setApiToken(value: string | undefined): void {
  token = value;
}

export function currentToken(): string | undefined {
  return token;
}

/** Called when the Core stops accepting the session's credential (a revoked or rotated token). */
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

export function authHeaders(extra: Record<string, string> = {}, with_token = token): Record<string, string> {
  return with_token ? { ...extra, authorization: `Bearer ${with_token}` } : extra;
}

async function errorOf(response: Response): Promise<ApiError> {
  const body = (await response.json().catch(() => undefined)) as { message?: string; problems?: Problem[] } | undefined;
  const message = body?.message ?? `${response.status} ${response.statusText}`;
  return new ApiError(response.status, message, Array.isArray(body?.problems) ? body.problems : []);
}

/** `session`: the call is made with the session's credential, so a 401 means the session has ended. */
async function call(method: string, path: string, body?: unknown, with_token = token, session = true): Promise<Response> {
  const headers = authHeaders(body === undefined ? {} : { 'content-type': 'application/json' }, with_token);
  const response = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), cache: 'no-store' });
  if (response.status === 401 && session) onUnauthorized();
  return response;
}

export async function getJson<T>(path: string): Promise<T> {
  const response = await call('GET', path);
  if (!response.ok) throw await errorOf(response);
  return (await response.json()) as T;
}

export async function sendJson<T>(method: 'POST' | 'PUT' | 'DELETE', path: string, body: unknown): Promise<T> {
  const response = await call(method, path, body);
  if (!response.ok) throw await errorOf(response);
  return (await response.json()) as T;
}

/** Asks the Core who a credential is, without making it the session's; undefined token: no header. */
export async function probe<T>(path: string, candidate: string | undefined): Promise<{ status: number; body?: T; message?: string }> {
  const response = await call('GET', path, undefined, candidate, false);
  if (response.ok) return { status: response.status, body: (await response.json()) as T };
  return { status: response.status, message: (await errorOf(response)).message };
}

/** Direct invoke: a failed call still answers with a PluginResult, whatever its status. */
export async function runCapability(
  pluginId: string,
  capabilityId: string,
  parameters: Record<string, unknown>,
  confirmed: boolean,
): Promise<{ status: number; result: PluginResult }> {
  const query = confirmed ? '?confirmed=true' : '';
  const response = await call('POST', `v1/plugins/${encodeURIComponent(pluginId)}/tools/${encodeURIComponent(capabilityId)}/run${query}`, parameters);
  const body = (await response.json().catch(() => undefined)) as (PluginResult & { message?: string }) | undefined;
  if (body && typeof body.success === 'boolean') return { status: response.status, result: body };
  return { status: response.status, result: { success: false, error: body?.message ?? `${response.status} ${response.statusText}` } };
}

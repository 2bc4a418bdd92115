// The adapter for plugins that run their own HTTP server (type 'http'). Two ways in:
// POST the whole PluginRequest to base_url + path (default /run), or, when a capability declares its
// own REST method + path, call that with the parameters (GET/DELETE: query string, else JSON body).
// Liveness: health_check_url is polled (health-poller.ts); the dispatcher's signal aborts slow calls.
import type { LivenessConfig } from '../config/types.js';
import type { Logger } from '../log.js';
import type { CapabilitySpec, JsonObject, JsonValue, PluginRequest, PluginResult } from '../protocol/types.js';
import type { PluginRecord } from '../registry/record.js';
import type { RegistryApi } from '../registry/registry-api.js';
import type { AdapterCall, HealthReport, PluginAdapter } from './adapter.js';
import { guardedFetch, TargetRefusedError } from './guarded-fetch.js';
import { createHealthPoller, type HealthPoller } from '../liveness/health-poller.js';
import type { SelfTargetGuard } from './self-target.js';
import { clip, failure, parseTextualAnswer, tryParseJson } from './plugin-result.js';
import { errorMessage } from '../kit/error-message.js';
import { isPlainObject } from '../kit/plain-object.js';
import { formatIssues } from '../kit/format-issues.js';
import { redactUrlSecrets } from '../kit/redact-url.js';

export interface HttpAdapterOptions {
  registry: RegistryApi;
  log: Logger;
  liveness: Pick<LivenessConfig, 'health_poll_sec' | 'health_failure_threshold'>;
  /** Bodies above this size are refused (default 1 MiB). */
  max_response_bytes?: number;
  /** Timeout of one health check (default: the poll interval, at most 5 s). */
  health_timeout_ms?: number;
  /** Refuses every URL (configured or redirected to) that reaches the Core's own HTTP API. */
  guard?: SelfTargetGuard;
}

export interface HttpAdapter extends PluginAdapter {
  /** Follows registry events: polls the health of every http plugin with a health_check_url. */
  start(): void;
}

/** A parameter value that cannot be used in the capability's path: the caller's mistake, not the plugin's. */
export class PathParameterError extends Error {}

interface PreparedCall {
  url: string;
  init: RequestInit & { method: string; headers: Record<string, string> };
}

export function createHttpAdapter(options: HttpAdapterOptions): HttpAdapter {
  const { registry, log } = options;
  const maxBytes = options.max_response_bytes ?? 1024 * 1024;
  const intervalMs = Math.max(0.01, options.liveness.health_poll_sec) * 1000;
  const healthTimeoutMs = options.health_timeout_ms ?? Math.min(5000, intervalMs);
  const unsubscribe: (() => void)[] = [];
  const poller: HealthPoller = createHealthPoller({
    registry,
    log,
    interval_ms: intervalMs,
    failure_threshold: options.liveness.health_failure_threshold,
    check: (record) => checkHealth(record),
  });

  async function invoke(call: AdapterCall): Promise<PluginResult> {
    const { record, capability, request, signal } = call;
    const id = record.descriptor.id;
    let prepared: PreparedCall;
    try {
      prepared = prepare(record, capability, request);
    } catch (err) {
      return failure(request, errorMessage(err), err instanceof PathParameterError ? 'invalid_params' : 'adapter_error');
    }
    let response: Response;
    try {
      response = await guardedFetch(prepared.url, { ...prepared.init, signal }, options.guard);
    } catch (err) {
      if (err instanceof TargetRefusedError) {
        log.warn({ plugin_id: id, url: err.url, redirected: err.redirected }, 'call to the Core itself refused');
        return failure(request, `plugin ${id} ${err.redirected ? err.message : `targets ${err.message}`}: refused`, 'adapter_error');
      }
      return failure(request, describeFetchError(id, prepared.url, err, signal), signal.aborted ? 'timeout' : 'adapter_error');
    }
    let body: string;
    try {
      body = await readCapped(response, maxBytes, signal);
    } catch (err) {
      return failure(request, describeFetchError(id, prepared.url, err, signal), signal.aborted ? 'timeout' : 'adapter_error');
    }
    if (!response.ok) {
      return failure(request, `plugin ${id} answered HTTP ${response.status} ${response.statusText}`.trimEnd() + bodyHint(body), 'plugin_error');
    }
    return parseTextualAnswer(request, body);
  }

  async function checkHealth(record: PluginRecord): Promise<HealthReport> {
    const url = record.descriptor.health_check_url;
    if (!url) return { ok: false, detail: `plugin ${record.descriptor.id} has no health_check_url` };
    const signal = AbortSignal.timeout(healthTimeoutMs);
    try {
      const response = await guardedFetch(url, { method: 'GET', signal, headers: { accept: 'application/json, text/plain, */*' } }, options.guard);
      // Drain the body so the keep-alive socket can be reused.
      await response.arrayBuffer().catch(() => undefined);
      return response.ok ? { ok: true, detail: `HTTP ${response.status}` } : { ok: false, detail: `HTTP ${response.status} from ${redactUrlSecrets(url)}` };
    } catch (err) {
      if (err instanceof TargetRefusedError) return { ok: false, detail: `the health check ${err.message}: refused` };
      if (signal.aborted) return { ok: false, detail: `no answer from ${redactUrlSecrets(url)} within ${healthTimeoutMs} ms` };
      return { ok: false, detail: describeNetworkError(url, err) };
    }
  }

  async function attach(record: PluginRecord): Promise<void> {
    const id = record.descriptor.id;
    if (record.descriptor.type === 'http' && options.guard) {
      // Registrations are checked before they are stored; this catches records stored before that rule.
      const problems = await options.guard.descriptorProblems(record.descriptor);
      if (problems.length > 0) {
        poller.unwatch(id);
        const reason = formatIssues(problems);
        log.error({ plugin_id: id, problems }, 'http plugin targets the Core itself; not used');
        registry.setState(id, 'error', reason);
        return;
      }
    }
    if (record.descriptor.type === 'http' && record.descriptor.health_check_url) poller.watch(id);
    else poller.unwatch(id);
  }

  return {
    type: 'http',
    invoke,
    attach,
    detach(record) {
      poller.unwatch(record.descriptor.id);
    },
    health: checkHealth,
    start() {
      if (unsubscribe.length > 0) return;
      unsubscribe.push(
        registry.events.on('plugin.registered', ({ record }) => void attach(record)),
        registry.events.on('plugin.updated', ({ record, previous }) => {
          // Restart polling only when something that matters to it changed.
          if (record.descriptor.health_check_url !== previous.descriptor.health_check_url || record.descriptor.type !== previous.descriptor.type) {
            void attach(record);
          }
        }),
        registry.events.on('plugin.removed', ({ record }) => poller.unwatch(record.descriptor.id)),
      );
      for (const record of registry.list()) if (record.descriptor.type === 'http') void attach(record);
    },
    async stop() {
      for (const off of unsubscribe.splice(0)) off();
      poller.stop();
    },
  };
}

// ---- building the request --------------------------------------------------------------------

function joinUrl(base: string, path: string): string {
  if (/^https?:\/\//i.test(path)) return path;
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

function stringHeaders(value: unknown): Record<string, string> {
  const headers: Record<string, string> = {};
  if (!isPlainObject(value)) return headers;
  for (const [key, v] of Object.entries(value)) if (typeof v === 'string') headers[key.toLowerCase()] = v;
  return headers;
}

function queryValue(value: JsonValue): string {
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

/** Builds the URL and fetch options for one call; throws with a clear message on a bad config. */
export function prepare(record: PluginRecord, capability: CapabilitySpec, request: PluginRequest): PreparedCall {
  const config = record.descriptor.config;
  const id = record.descriptor.id;
  const baseUrl = typeof config.base_url === 'string' ? config.base_url : undefined;
  const headers: Record<string, string> = {
    accept: 'application/json, text/plain, */*',
    'x-homeclaw-request-id': request.request_id,
    ...stringHeaders(config.headers),
  };

  if (!capability.path) {
    if (!baseUrl) throw new Error(`plugin ${id} has no config.base_url`);
    const path = typeof config.path === 'string' ? config.path : '/run';
    headers['content-type'] = 'application/json';
    return { url: joinUrl(baseUrl, path), init: { method: 'POST', headers, body: JSON.stringify(request) } };
  }

  if (!baseUrl && !/^https?:\/\//i.test(capability.path)) throw new Error(`plugin ${id} has no config.base_url for the path ${capability.path}`);
  const method = capability.method ?? 'POST';
  const remaining: JsonObject = { ...request.parameters };
  // Path templates ({name}) take their value from the parameters and consume it.
  const path = capability.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_match, name: string) => {
    const value = remaining[name];
    if (value === undefined || value === null) throw new PathParameterError(`parameter "${name}" is needed for the path ${capability.path}`);
    const text = queryValue(value);
    // A whole segment "." or ".." would be resolved away by the URL parser and change the path.
    if (text === '.' || text === '..') throw new PathParameterError(`parameter "${name}" may not be "${text}" in the path ${capability.path}`);
    delete remaining[name];
    return encodeURIComponent(text);
  });
  if (path.split(/[/?#]/).some(isDotSegment) && !capability.path.split(/[/?#]/).some(isDotSegment)) {
    throw new PathParameterError(`the parameters of the path ${capability.path} may not form a "." or ".." segment`);
  }
  const url = new URL(joinUrl(baseUrl ?? '', path));
  if (method === 'GET' || method === 'DELETE') {
    for (const [name, value] of Object.entries(remaining)) {
      if (value === null) continue;
      if (Array.isArray(value)) for (const item of value) url.searchParams.append(name, queryValue(item));
      else url.searchParams.append(name, queryValue(value));
    }
    return { url: url.toString(), init: { method, headers } };
  }
  headers['content-type'] = 'application/json';
  return { url: url.toString(), init: { method, headers, body: JSON.stringify(remaining) } };
}

function isDotSegment(segment: string): boolean {
  return /^(\.|%2e){1,2}$/i.test(segment);
}

// ---- reading the answer ----------------------------------------------------------------------

async function readCapped(response: Response, maxBytes: number, signal: AbortSignal): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new Error(`the response is ${declared} bytes, more than the limit of ${maxBytes}`);
  }
  if (!response.body) return '';
  // A declared length within the limit can be read in one go; only an undeclared (chunked) body needs
  // the counting loop below.
  if (Number.isFinite(declared) && response.headers.has('content-length')) return response.text();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    if (signal.aborted) {
      await reader.cancel().catch(() => undefined);
      throw signal.reason ?? new Error('aborted');
    }
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`the response is larger than the limit of ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function bodyHint(body: string): string {
  if (!body.trim()) return '';
  const parsed = tryParseJson(body.trim());
  if (parsed.ok && typeof parsed.value === 'object' && parsed.value !== null) {
    const error = (parsed.value as Record<string, unknown>).error;
    if (typeof error === 'string' && error) return `: ${clip(error)}`;
  }
  return `: ${clip(body)}`;
}

function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  const visit = (e: unknown, depth: number): void => {
    if (!e || typeof e !== 'object' || depth > 4) return;
    const record = e as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof record.code === 'string') codes.push(record.code);
    visit(record.cause, depth + 1);
    if (Array.isArray(record.errors)) for (const inner of record.errors) visit(inner, depth + 1);
  };
  visit(err, 0);
  return codes;
}

/** The URL is shown without its password and query values: the error reaches the caller, not only the admin. */
function describeNetworkError(rawUrl: string, err: unknown): string {
  const url = redactUrlSecrets(rawUrl);
  const codes = errorCodes(err);
  if (codes.includes('ECONNREFUSED')) return `connection refused at ${url}`;
  if (codes.includes('ENOTFOUND') || codes.includes('EAI_AGAIN')) return `host not found for ${url}`;
  const cause = (err as { cause?: unknown }).cause;
  // fetch's own messages may quote the URL as written.
  const message = (cause instanceof Error ? cause.message : errorMessage(err)).split(rawUrl).join(url);
  return `could not reach ${url}: ${message}${codes.length ? ` (${codes[0]})` : ''}`;
}

function describeFetchError(id: string, rawUrl: string, err: unknown, signal: AbortSignal): string {
  const url = redactUrlSecrets(rawUrl);
  if (signal.aborted) {
    const reason = signal.reason instanceof Error ? signal.reason.message : 'deadline reached';
    return `plugin ${id} did not answer at ${url}: ${reason}`;
  }
  if (errorCodes(err).includes('ECONNREFUSED')) return `plugin ${id} is not running (connection refused at ${url})`;
  if (err instanceof Error && /larger than the limit|more than the limit/.test(err.message)) return `plugin ${id} answered too much: ${err.message}`;
  return `plugin ${id}: ${describeNetworkError(rawUrl, err)}`;
}

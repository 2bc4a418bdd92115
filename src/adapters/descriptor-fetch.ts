// Fetches the descriptor a small device registers by reference ({id, epoch, descriptor_url}). The URL
// comes from a device, so the request is bounded in every way: http(s) only, the same self-target guard
// as HTTP plugins on the URL and on every redirect (it may never be the Core's own API), no credentials
// of any kind sent, a timeout over the whole exchange, a size cap enforced while reading, and a
// JSON or YAML content type. Failures are short sentences for the registration's nack; nothing of the
// response body is echoed back.
import { parse as parseYaml } from 'yaml';
import { guardedFetch, TargetRefusedError } from './guarded-fetch.js';
import type { SelfTargetGuard } from './self-target.js';
import { errorMessage } from '../kit/error-message.js';
import { isPlainObject } from '../kit/plain-object.js';
import { explainPrototypeKey, findPrototypeKey } from '../kit/prototype-keys.js';

export interface DescriptorFetchLimits {
  /** The whole exchange: connecting, redirects, headers and body. */
  timeout_ms: number;
  /** Largest JSON body accepted. */
  max_bytes: number;
  /** Largest YAML body accepted (YAML is parsed on the event loop, and is much slower to parse than JSON). */
  max_yaml_bytes: number;
}

export const DEFAULT_DESCRIPTOR_FETCH_LIMITS: DescriptorFetchLimits = { timeout_ms: 5_000, max_bytes: 262_144, max_yaml_bytes: 65_536 };

export type FetchedDescriptor = { ok: true; document: Record<string, unknown> } | { ok: false; error: string };

const JSON_TYPES = /^application\/(?:[\w.+-]+\+)?json$/;
const YAML_TYPES = /^(?:application|text)\/(?:x-)?yaml$/;
/** Static servers (GitHub raw among them) send descriptor files as text/plain; some send nothing. */
const PLAIN_TYPES = /^text\/plain$/;

export class DescriptorFetcher {
  constructor(
    private readonly guard: SelfTargetGuard | undefined,
    private readonly limits: DescriptorFetchLimits = DEFAULT_DESCRIPTOR_FETCH_LIMITS,
  ) {}

  async fetch(url: string): Promise<FetchedDescriptor> {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return { ok: false, error: `descriptor_url ${JSON.stringify(url)} is not a URL` };
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      return { ok: false, error: `descriptor_url must be http or https, not ${parsed.protocol}` };
    if (parsed.username || parsed.password) return { ok: false, error: 'descriptor_url must not carry a user name or password: the Core sends no credentials' };
    const shown = parsed.toString();
    const signal = AbortSignal.timeout(this.limits.timeout_ms);
    try {
      // Only these headers: no Authorization, cookie or token of the Core ever goes to a device's URL.
      const response = await guardedFetch(
        shown,
        { method: 'GET', headers: { accept: 'application/json, application/yaml;q=0.9, text/plain;q=0.5' }, signal },
        this.guard,
      );
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        return { ok: false, error: `fetching ${shown} answered HTTP ${response.status}` };
      }
      const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
      const kind = JSON_TYPES.test(type) ? 'json' : YAML_TYPES.test(type) ? 'yaml' : PLAIN_TYPES.test(type) || type === '' ? 'plain' : undefined;
      if (!kind) {
        await response.body?.cancel().catch(() => undefined);
        return { ok: false, error: `${shown} answered with content type ${type}; a descriptor is JSON (application/json) or YAML (application/yaml)` };
      }
      const cap = kind === 'json' ? this.limits.max_bytes : this.limits.max_yaml_bytes;
      const body = await readCapped(response, cap);
      if (!body.ok) return { ok: false, error: `${shown}: ${body.error}` };
      return parseDocument(body.text, kind, shown, this.limits.max_yaml_bytes);
    } catch (error) {
      if (error instanceof TargetRefusedError) return { ok: false, error: `descriptor_url ${error.message}` };
      if (signal.aborted) return { ok: false, error: `fetching ${shown} took longer than ${this.limits.timeout_ms / 1000} s` };
      return { ok: false, error: `fetching ${shown} failed: ${causeOf(error)}` };
    }
  }
}

async function readCapped(response: Response, cap: number): Promise<{ ok: true; text: string } | { ok: false; error: string }> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > cap) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: false, error: `the descriptor is ${declared} bytes, more than the ${cap} allowed` };
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = response.body?.getReader();
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > cap) {
        await reader.cancel().catch(() => undefined);
        return { ok: false, error: `the descriptor is more than the ${cap} bytes allowed` };
      }
      chunks.push(value);
    }
  }
  try {
    return { ok: true, text: new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks)) };
  } catch {
    return { ok: false, error: 'the descriptor is not UTF-8 text' };
  }
}

function parseDocument(text: string, kind: 'json' | 'yaml' | 'plain', shown: string, maxYamlBytes: number): FetchedDescriptor {
  let value: unknown;
  try {
    if (kind === 'json' || (kind === 'plain' && /^\s*[{[]/.test(text))) value = JSON.parse(text);
    else if (Buffer.byteLength(text) > maxYamlBytes) return { ok: false, error: `${shown}: a YAML descriptor may be at most ${maxYamlBytes} bytes` };
    else value = parseYaml(text);
  } catch (error) {
    return { ok: false, error: `${shown} is not valid ${kind === 'json' ? 'JSON' : kind === 'yaml' ? 'YAML' : 'JSON or YAML'}${whereItFailed(error)}` };
  }
  if (!isPlainObject(value)) {
    return {
      ok: false,
      error: `${shown} holds ${Array.isArray(value) ? 'a list' : value === null || value === undefined ? 'nothing' : `a ${typeof value}`}, not a descriptor object`,
    };
  }
  // The document comes from a device, like a registration over MQTT, and is held to the same rule.
  const prototypeKey = findPrototypeKey(value);
  if (prototypeKey !== undefined) return { ok: false, error: `${shown} has ${explainPrototypeKey(prototypeKey)}` };
  return { ok: true, document: value as Record<string, unknown> };
}

/**
 * Where parsing failed, without any of the document's text: the URL came from a device, and an excerpt
 * of whatever it pointed at (a page on the LAN) must not travel back in the nack.
 */
function whereItFailed(error: unknown): string {
  const message = errorMessage(error);
  const position = /position (\d+)/.exec(message) ?? /at line (\d+), column (\d+)/.exec(message);
  if (!position) return '';
  return position.length === 3 ? ` (line ${position[1]}, column ${position[2]})` : ` (at character ${position[1]})`;
}

/** fetch() reports network failures as "fetch failed" with the reason in `cause`. */
function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  return errorMessage(error);
}

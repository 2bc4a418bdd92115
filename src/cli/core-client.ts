// How CLI commands reach a running Core: its HTTP API with the admin bearer token.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { adminTokenPath } from '../api/admin-token.js';

export interface CoreClientOptions {
  url?: string;
  token?: string;
  env?: Record<string, string | undefined>;
}

export class CoreClientError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

export interface CoreResponse<T> {
  status: number;
  body: T;
}

export class CoreClient {
  readonly url: string;
  private readonly token: string | undefined;

  constructor(options: CoreClientOptions = {}) {
    const env = options.env ?? process.env;
    this.url = (options.url || env.HOMECLAW_URL || 'http://127.0.0.1:8765').replace(/\/+$/, '');
    this.token = options.token || env.HOMECLAW_ADMIN_TOKEN || readTokenFile(env);
  }

  /** Resolves for every HTTP status; rejects only when the Core cannot be reached or answers non-JSON. */
  async request<T>(method: 'GET' | 'POST' | 'DELETE' | 'PUT', path: string, body?: unknown): Promise<CoreResponse<T>> {
    let response: Response;
    try {
      response = await fetch(`${this.url}${path}`, {
        method,
        headers: {
          ...(this.token ? { authorization: `Bearer ${this.token}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message;
      throw new CoreClientError(`cannot reach the Core at ${this.url} (${cause}); is it running? Start it with: homeclaw start`);
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? {} : JSON.parse(text);
    } catch {
      throw new CoreClientError(`the Core answered ${response.status} with non-JSON: ${text.slice(0, 200)}`, response.status);
    }
    if (response.status === 401) {
      throw new CoreClientError(
        'the Core refused the admin token: set HOMECLAW_ADMIN_TOKEN or run from the directory holding data/admin.token (or set HOMECLAW_DATA_DIR)',
        401,
        parsed,
      );
    }
    return { status: response.status, body: parsed as T };
  }
}

function readTokenFile(env: Record<string, string | undefined>): string | undefined {
  const file = adminTokenPath(resolve(env.HOMECLAW_DATA_DIR ?? './data'));
  if (!existsSync(file)) return undefined;
  return readFileSync(file, 'utf8').trim() || undefined;
}

/** Formats an error body of the API (statusCode, message, problems) for a terminal. */
export function describeApiError(body: unknown): string {
  if (body && typeof body === 'object') {
    const b = body as { message?: string; error?: string; problems?: { path: string; message: string }[] };
    const lines = [b.message ?? b.error ?? 'request failed'];
    for (const p of b.problems ?? []) if (p.message !== b.message) lines.push(`  ${p.path || '/'}: ${p.message}`);
    return lines.join('\n');
  }
  return String(body);
}

// Reachability of the HTTP services the Core depends on when configured: the LLM endpoint and Home
// Assistant. Shared by readiness (up/down) and `homeclaw doctor` (which turns `kind` into a fix).
// A probe sends one cheap, read-only GET that needs the same credentials as the real traffic, so a
// refused key shows up here rather than at the first user message.
import type { CoreConfig } from '../config/types.js';

export type EndpointProblem = 'unreachable' | 'timeout' | 'unauthorized' | 'not_found' | 'http_error' | 'bad_url';

export interface EndpointCheck {
  up: boolean;
  /** What was asked and what came back, for logs and doctor (never contains the key or token). */
  reason: string;
  problem?: EndpointProblem;
  status?: number;
}

export interface HomeAssistantTarget {
  url: string;
  token: string | null;
}

/** GET url; 2xx is up. Never throws. */
export async function probeHttpEndpoint(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<EndpointCheck> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { up: false, problem: 'bad_url', reason: `"${url}" is not a valid URL` };
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return { up: false, problem: 'bad_url', reason: `"${url}" is not an http(s) URL` };
  }
  const shown = `${parsed.origin}${parsed.pathname}`;
  let response: Response;
  try {
    response = await fetch(parsed, { method: 'GET', headers, signal, redirect: 'follow' });
  } catch (error) {
    if (signal.aborted) return { up: false, problem: 'timeout', reason: `GET ${shown}: no answer in time` };
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { up: false, problem: 'unreachable', reason: `GET ${shown}: ${cause?.code ?? cause?.message ?? (error as Error).message}` };
  }
  // The body is not needed; cancelling it frees the socket at once.
  await response.body?.cancel().catch(() => undefined);
  const status = response.status;
  if (status >= 200 && status < 300) return { up: true, status, reason: `GET ${shown}: ${status}` };
  const problem: EndpointProblem = status === 401 || status === 403 ? 'unauthorized' : status === 404 ? 'not_found' : 'http_error';
  return { up: false, status, problem, reason: `GET ${shown}: HTTP ${status}` };
}

/**
 * An OpenAI-compatible endpoint lists its models at GET <base_url>/models (OpenAI, Ollama, llama.cpp,
 * vLLM, LM Studio). A 404 there almost always means a base URL without its /v1, which would fail chat
 * completions the same way.
 */
export function probeLlm(llm: Pick<CoreConfig['llm'], 'base_url' | 'api_key'>, signal: AbortSignal): Promise<EndpointCheck> {
  const base = (llm.base_url ?? '').replace(/\/+$/, '');
  return probeHttpEndpoint(`${base}/models`, llm.api_key ? { authorization: `Bearer ${llm.api_key}` } : {}, signal);
}

/** Home Assistant's REST API answers GET /api/ with {"message": "API running."} given a valid long-lived token. */
export function probeHomeAssistant(target: HomeAssistantTarget, signal: AbortSignal): Promise<EndpointCheck> {
  const base = target.url.replace(/\/+$/, '');
  return probeHttpEndpoint(`${base}/api/`, target.token ? { authorization: `Bearer ${target.token}` } : {}, signal);
}

/** Where Home Assistant is, when configured (the environment overrides are already merged into the config). */
export function homeAssistantTarget(config: CoreConfig): HomeAssistantTarget | null {
  const { url, token } = config.homeassistant;
  return url ? { url, token } : null;
}

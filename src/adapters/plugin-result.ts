// Turns whatever a plugin answered (a string, a partial result, a response body) into a PluginResult.
// request_id and plugin_id always come from the request, never from the plugin: a plugin cannot
// answer for another call.
import type { ErrorCode, JsonObject, JsonValue, PluginRequest, PluginResult } from '../protocol/types.js';
import { isPlainObject } from '../kit/plain-object.js';

export function failure(request: PluginRequest, error: string, error_code: ErrorCode): PluginResult {
  return { request_id: request.request_id, plugin_id: request.plugin_id, success: false, error, error_code };
}

export function textResult(request: PluginRequest, text: string): PluginResult {
  return { request_id: request.request_id, plugin_id: request.plugin_id, success: true, text };
}

/** A JSON-safe copy (drops functions, turns Dates into strings); undefined when it cannot be serialised. */
export function toJsonValue(value: unknown): JsonValue | undefined {
  if (value === undefined) return undefined;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
  } catch {
    return undefined;
  }
}

/** True when an object looks like a (partial) PluginResult rather than arbitrary data. */
export function looksLikeResult(value: unknown): value is Record<string, unknown> {
  if (!isPlainObject(value)) return false;
  const record = value as Record<string, unknown>;
  if (typeof record.success === 'boolean') return true;
  return typeof record.text === 'string' || typeof record.error === 'string';
}

/**
 * Coerces a handler's return value. Strings are the text; result-shaped objects are taken field by
 * field; anything else becomes `data` with its JSON as text.
 */
export function coerceResult(request: PluginRequest, value: unknown): PluginResult {
  const base = { request_id: request.request_id, plugin_id: request.plugin_id };
  if (value === undefined || value === null) return { ...base, success: true, text: '' };
  if (typeof value === 'string') return { ...base, success: true, text: value };
  if (!looksLikeResult(value)) {
    const data = toJsonValue(value);
    return { ...base, success: true, text: data === undefined ? String(value) : JSON.stringify(data), ...(data !== undefined ? { data } : {}) };
  }
  const error = typeof value.error === 'string' && value.error.length > 0 ? value.error : undefined;
  const success = typeof value.success === 'boolean' ? value.success : error === undefined;
  const result: PluginResult = { ...base, success };
  if (typeof value.text === 'string') result.text = value.text;
  if (!success) {
    result.error = error ?? (typeof value.text === 'string' && value.text ? value.text : `plugin ${request.plugin_id} reported a failure without a message`);
    result.error_code = 'plugin_error';
  } else if (error !== undefined) {
    result.error = error;
  }
  const data = toJsonValue(value.data);
  if (data !== undefined) result.data = data;
  if (value.ask_user === true) result.ask_user = true;
  if (Array.isArray(value.missing_parameters)) {
    result.missing_parameters = value.missing_parameters.filter((name): name is string => typeof name === 'string');
  }
  const metadata = toJsonValue(value.metadata);
  if (isPlainObject(metadata)) {
    result.metadata = metadata as JsonObject;
  }
  return result;
}

/**
 * Reads a textual answer (HTTP body, subprocess stdout): a PluginResult-shaped JSON object is coerced,
 * other JSON becomes data (with the raw text), and anything else is the text itself.
 */
export function parseTextualAnswer(request: PluginRequest, raw: string): PluginResult {
  const trimmed = raw.trim();
  const parsed = tryParseJson(trimmed);
  if (parsed.ok) {
    if (looksLikeResult(parsed.value)) return coerceResult(request, parsed.value);
    if (typeof parsed.value === 'string') return textResult(request, parsed.value);
    const data = toJsonValue(parsed.value);
    return { ...textResult(request, trimmed), ...(data !== undefined ? { data } : {}) };
  }
  return textResult(request, trimmed);
}

export function tryParseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.length === 0) return { ok: false };
  const first = text[0];
  if (first !== '{' && first !== '[' && first !== '"') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** The first `max` characters of a text, with an ellipsis when cut. */
export function clip(text: string, max = 300): string {
  const flat = text.trim();
  return flat.length <= max ? flat : `${flat.slice(0, max)}…`;
}

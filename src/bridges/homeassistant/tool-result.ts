// Home Assistant's tools answer JSON text: intent tools (HassTurnOn, ...) an intent response
// {speech, response_type, data: {targets, success, failed} | {code}}, the other Assist tools
// {success, result | error}. The user should read a sentence, not that JSON, so the text becomes one
// and the JSON stays in `data` for callers that want it. Errors raised inside Home Assistant come back
// as MCP tool errors ("Error calling tool: ...") and stay failures.
import { toJsonValue, tryParseJson } from '../../adapters/plugin-result.js';
import type { PluginResult } from '../../protocol/types.js';
import { isPlainObject } from '../../kit/plain-object.js';

/** The past tense of the intents that act on devices, for "Turned on Kitchen Light." */
const DONE_VERB: Record<string, string> = {
  HassTurnOn: 'Turned on',
  HassTurnOff: 'Turned off',
  HassToggle: 'Toggled',
  HassLightSet: 'Set',
  HassSetPosition: 'Set the position of',
  HassClimateSetTemperature: 'Set the temperature of',
  HassFanSetSpeed: 'Set the speed of',
  HassMediaPause: 'Paused',
  HassMediaUnpause: 'Resumed',
  HassMediaNext: 'Skipped to the next item on',
  HassMediaPrevious: 'Went back on',
  HassSetVolume: 'Set the volume of',
  HassVacuumStart: 'Started',
  HassVacuumReturnToBase: 'Sent back to its base:',
};

type Json = Record<string, unknown>;

function targetNames(value: unknown): string[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isPlainObject).map((target) => (typeof target.name === 'string' ? target.name : String(target.id ?? '?')));
}

function speechOf(response: Json): string | undefined {
  const speech = response.speech;
  if (!isPlainObject(speech) || !isPlainObject(speech.plain)) return undefined;
  const text = speech.plain.speech;
  return typeof text === 'string' && text.trim() !== '' ? text : undefined;
}

function intentText(tool: string, response: Json): { ok: boolean; text: string } {
  const data = isPlainObject(response.data) ? response.data : {};
  const speech = speechOf(response);
  if (response.response_type === 'error') {
    const code = typeof data.code === 'string' ? ` (${data.code})` : '';
    return { ok: false, text: speech ?? `Home Assistant could not do that${code}` };
  }
  if (speech) return { ok: true, text: speech };
  const done = targetNames(data.success);
  const failed = targetNames(data.failed);
  const parts: string[] = [];
  if (done.length > 0) parts.push(`${DONE_VERB[tool] ?? 'Done:'} ${done.join(', ')}.`);
  if (failed.length > 0) parts.push(`Failed: ${failed.join(', ')}.`);
  return { ok: done.length > 0 || failed.length === 0, text: parts.join(' ') || 'Done.' };
}

function toolText(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** The result a user reads; request_id and plugin_id stay those of the call. */
export function readableResult(tool: string, result: PluginResult): PluginResult {
  if (!result.success) return { ...result, error_code: result.error_code ?? 'plugin_error' };
  const parsed = tryParseJson(result.text ?? '');
  if (!parsed.ok || !isPlainObject(parsed.value)) return result;
  const response = parsed.value;
  const data = toJsonValue(response);
  const base = { request_id: result.request_id, plugin_id: result.plugin_id, ...(data !== undefined ? { data } : {}) };
  if (typeof response.response_type === 'string') {
    const { ok, text } = intentText(tool, response);
    return ok ? { ...base, success: true, text } : { ...base, success: false, error: text, error_code: 'plugin_error' };
  }
  if (response.success === false) {
    return { ...base, success: false, error: toolText(response.error ?? 'Home Assistant reported a failure'), error_code: 'plugin_error' };
  }
  if (response.success === true && 'result' in response) return { ...base, success: true, text: toolText(response.result) };
  return result;
}

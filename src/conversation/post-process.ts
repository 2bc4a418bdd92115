// Turning a plugin result into the text the user reads: post-processing by the LLM when the capability
// asks for it (successes only), clear messages for failures, raw output otherwise.
import type { CapabilitySpec, PluginResult } from '../protocol/types.js';
import type { Logger } from '../log.js';
import type { LlmClient } from './llm-client.js';

const DEFAULT_POST_PROCESS_PROMPT = 'Rewrite the following plugin output as a short, friendly answer for the user. Keep every fact; add nothing.';

/** The raw output as text: the plugin's text, else its structured data as JSON. */
export function rawOutput(result: PluginResult): string {
  if (typeof result.text === 'string' && result.text.trim() !== '') return result.text;
  if (result.data !== undefined) return typeof result.data === 'string' ? result.data : JSON.stringify(result.data);
  return 'Done.';
}

/** A failure explained to a user, naming the plugin and what to do. */
export function describeFailure(result: PluginResult, pluginId: string, capabilityId: string | undefined): string {
  const target = capabilityId ? `${pluginId} (${capabilityId})` : pluginId;
  const detail = result.error ? `: ${result.error}` : '';
  switch (result.error_code) {
    case 'timeout':
      return `The plugin ${target} did not answer in time${detail}. Please try again later.`;
    case 'offline':
      return `The plugin ${target} is offline right now${detail}.`;
    case 'stale':
      return `The plugin ${target} is not responding (no recent heartbeat)${detail}.`;
    case 'busy':
      return `The plugin ${target} is busy${detail}. Please try again in a moment.`;
    case 'not_found':
      return `There is no plugin or capability ${target}${detail}.`;
    case 'invalid_params':
      return `The plugin ${target} refused the parameters${detail}.`;
    case 'cancelled':
      return `The call to ${target} was cancelled${detail}.`;
    case 'forbidden':
      return `You are not allowed to use ${target}. Ask whoever runs this assistant if you need it.`;
    case 'confirmation_required':
      return `${target} needs your confirmation first${detail}.`;
    case 'adapter_error':
      return `The Core could not reach the plugin ${target}${detail}.`;
    default:
      return `The plugin ${target} failed${detail}.`;
  }
}

export interface PostProcessInput {
  result: PluginResult;
  capability: CapabilitySpec;
  llm: LlmClient | null;
  userText: string;
  log: Logger;
}

/** Only successes reach here. An LLM failure falls back to the raw text, never to an error. */
export async function postProcess(input: PostProcessInput): Promise<string> {
  const raw = rawOutput(input.result);
  if (!input.capability.post_process || !input.llm) return raw;
  try {
    const reply = await input.llm.complete([
      { role: 'system', content: input.capability.post_process_prompt?.trim() || DEFAULT_POST_PROCESS_PROMPT },
      { role: 'user', content: `User request: ${input.userText}\n\nPlugin output:\n${raw}` },
    ]);
    const text = reply.content?.trim();
    return text ? text : raw;
  } catch (error) {
    input.log.warn({ err: error, plugin_id: input.result.plugin_id }, 'post-processing failed; sending the raw output');
    return raw;
  }
}

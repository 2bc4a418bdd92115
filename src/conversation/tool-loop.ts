// The bounded LLM tool loop. A tool either answers the model (its result goes back as a tool message,
// errors included, so the model can correct itself) or ends the turn with a reply for the user (a plugin
// answer or a question) that is sent as is, which saves a model round.
import type { LlmClient, LlmMessage, LlmReply, LlmToolCall, LlmToolDefinition } from './llm-client.js';
import { errorMessage } from '../kit/error-message.js';
import { isPlainObject } from '../kit/plain-object.js';
import { explainPrototypeKey, findPrototypeKey, mayHoldPrototypeKey } from '../kit/prototype-keys.js';

export type ToolExecution<TFinal> = { kind: 'to_model'; content: string } | { kind: 'final'; value: TFinal };

export type ToolExecutor<TFinal> = (call: LlmToolCall, parsedArguments: Record<string, unknown>) => Promise<ToolExecution<TFinal>>;

export type ToolLoopOutcome<TFinal> =
  | { kind: 'text'; text: string; rounds: number }
  | { kind: 'final'; value: TFinal; rounds: number }
  | { kind: 'max_rounds'; rounds: number }
  | { kind: 'llm_error'; error: Error; rounds: number };

export interface ToolLoopInput<TFinal> {
  llm: LlmClient;
  messages: LlmMessage[];
  tools: LlmToolDefinition[];
  maxRounds: number;
  execute: ToolExecutor<TFinal>;
}

export const TOOL_ROUTE_TO_PLUGIN = 'route_to_plugin';
export const TOOL_FIND_PLUGINS = 'find_plugins';

export const CONVERSATION_TOOLS: LlmToolDefinition[] = [
  {
    name: TOOL_ROUTE_TO_PLUGIN,
    description:
      "Call a plugin capability for the user. Omit capability_id to use the plugin's default capability. Put only values taken from the user's message in parameters.",
    parameters: {
      type: 'object',
      properties: {
        plugin_id: { type: 'string', description: 'Id of one of the listed plugins.' },
        capability_id: { type: 'string', description: 'Capability id; omitted = the default capability.' },
        parameters: { type: 'object', description: 'Parameter values by name.', additionalProperties: true },
      },
      required: ['plugin_id'],
      additionalProperties: false,
    },
  },
  {
    name: TOOL_FIND_PLUGINS,
    description: 'Search all registered plugins when none of the listed ones fits the request.',
    parameters: {
      type: 'object',
      properties: { query: { type: 'string', description: 'What the user needs, in a few words.' } },
      required: ['query'],
      additionalProperties: false,
    },
  },
];

export async function runToolLoop<TFinal>(input: ToolLoopInput<TFinal>): Promise<ToolLoopOutcome<TFinal>> {
  const messages = [...input.messages];
  const maxRounds = Math.max(1, input.maxRounds);
  for (let round = 1; round <= maxRounds; round++) {
    let reply: LlmReply;
    try {
      reply = await input.llm.complete(messages, input.tools);
    } catch (error) {
      return { kind: 'llm_error', error: error instanceof Error ? error : new Error(String(error)), rounds: round };
    }
    if (reply.tool_calls.length === 0) return { kind: 'text', text: (reply.content ?? '').trim(), rounds: round };
    messages.push({ role: 'assistant', content: reply.content, tool_calls: reply.tool_calls });
    for (const call of reply.tool_calls) {
      const parsed = parseArguments(call.arguments);
      const execution: ToolExecution<TFinal> = parsed.ok
        ? await input.execute(call, parsed.value)
        : { kind: 'to_model', content: `Error: the arguments of ${call.name} ${parsed.error}. Call the tool again with a JSON object.` };
      // The first call that produces a user-facing reply ends the turn; later calls in the same batch
      // are not executed, so one model turn never places two orders.
      if (execution.kind === 'final') return { kind: 'final', value: execution.value, rounds: round };
      messages.push({ role: 'tool', tool_call_id: call.id, content: execution.content });
    }
  }
  return { kind: 'max_rounds', rounds: maxRounds };
}

function parseArguments(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  if (text.trim() === '') return { ok: true, value: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (!isPlainObject(value)) return { ok: false, error: 'are not valid JSON (not a JSON object)' };
    // A model can be talked into anything by what it reads: its arguments are outside input like any other.
    const prototypeKey = mayHoldPrototypeKey(text) ? findPrototypeKey(value) : undefined;
    if (prototypeKey !== undefined) return { ok: false, error: `were refused (${explainPrototypeKey(prototypeKey)})` };
    return { ok: true, value: value as Record<string, unknown> };
  } catch (error) {
    return { ok: false, error: `are not valid JSON (${errorMessage(error)})` };
  }
}

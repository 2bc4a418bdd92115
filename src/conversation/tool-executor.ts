// Runs the model's tool calls: find_plugins (a search among the plugins the user may reach),
// profile_update (a proposed change that waits for the user's "yes") and route_to_plugin (a plugin call
// through the parameter dialogue). Only mistakes the model can fix (unknown plugin/capability, bad
// arguments, invalid parameters) go back to it as tool errors; anything else ends the turn.
import type { JsonObject } from '../protocol/types.js';
import { searchReachable, type EngineContext } from './engine-context.js';
import type { ReplyBody, Turn } from './engine-types.js';
import type { LlmToolCall } from './llm-client.js';
import type { PendingDialogue } from './pending-dialogue.js';
import { TOOL_PROFILE_UPDATE } from './profile-updates.js';
import { describePlugin } from './system-prompt.js';
import { TOOL_FIND_PLUGINS, TOOL_ROUTE_TO_PLUGIN, type ToolExecution } from './tool-loop.js';
import { findCapability } from '../kit/find-capability.js';

export async function executeTool(
  ctx: EngineContext,
  dialogue: PendingDialogue,
  turn: Turn,
  call: LlmToolCall,
  args: Record<string, unknown>,
): Promise<ToolExecution<ReplyBody>> {
  if (call.name === TOOL_FIND_PLUGINS) {
    const query = typeof args.query === 'string' ? args.query.trim() : '';
    if (!query) return { kind: 'to_model', content: 'Error: find_plugins needs a non-empty "query" string.' };
    const response = await searchReachable(ctx, query, turn.message.user_id);
    if (response.hits.length === 0) return { kind: 'to_model', content: `No plugin matches "${query}".` };
    const described = response.hits.map((hit) =>
      describePlugin({ record: hit.record, capability_order: hit.capabilities.map((c) => c.capability_id) }, ctx.deps.resolver),
    );
    return { kind: 'to_model', content: `Plugins matching "${query}":\n\n${described.join('\n\n')}` };
  }
  if (call.name === TOOL_PROFILE_UPDATE && ctx.deps.profileUpdates) {
    const proposed = ctx.deps.profileUpdates.propose(turn.key, args);
    if ('error' in proposed) return { kind: 'to_model', content: `Error: ${proposed.error}.` };
    dialogue.clearPending(turn.key);
    return { kind: 'final', value: { text: proposed.question, kind: 'question' } };
  }
  if (call.name !== TOOL_ROUTE_TO_PLUGIN) {
    return { kind: 'to_model', content: `Error: there is no tool "${call.name}". Use ${TOOL_ROUTE_TO_PLUGIN} or ${TOOL_FIND_PLUGINS}.` };
  }
  const problems: string[] = [];
  if (typeof args.plugin_id !== 'string' || args.plugin_id === '') problems.push('"plugin_id" must be a non-empty string');
  if (args.capability_id !== undefined && args.capability_id !== null && typeof args.capability_id !== 'string')
    problems.push('"capability_id" must be a string');
  const rawParameters = args.parameters;
  if (rawParameters !== undefined && rawParameters !== null && (typeof rawParameters !== 'object' || Array.isArray(rawParameters))) {
    problems.push('"parameters" must be an object');
  }
  if (problems.length > 0) return { kind: 'to_model', content: `Error: invalid route_to_plugin call: ${problems.join('; ')}.` };
  const pluginId = args.plugin_id as string;
  const capabilityId = typeof args.capability_id === 'string' && args.capability_id !== '' ? args.capability_id : undefined;
  const record = ctx.deps.registry.get(pluginId);
  if (!record) {
    return { kind: 'to_model', content: `Error: there is no plugin "${pluginId}". Use one of the listed plugin ids, or call ${TOOL_FIND_PLUGINS}.` };
  }
  const capability = findCapability(record.descriptor, capabilityId);
  if (!capability) {
    const ids = record.descriptor.capabilities.map((c) => c.id).join(', ') || 'none';
    return { kind: 'to_model', content: `Error: plugin "${pluginId}" has no capability "${capabilityId}". Its capabilities: ${ids}.` };
  }
  const explicit = (rawParameters ?? {}) as JsonObject;
  const { reply, result } = await dialogue.resolveAndInvoke(turn, record, capability, explicit, [], turn.text);
  if (result && !result.success && (result.error_code === 'invalid_params' || result.error_code === 'not_found')) {
    return { kind: 'to_model', content: `Error from ${pluginId}/${capability.id}: ${result.error ?? result.error_code}` };
  }
  return { kind: 'final', value: reply };
}

// Capabilities that require confirmation (unlocking, buying, deleting) are never invoked on a model's or
// a command's say-so: the user sees the action with every value it will use and answers "yes". One
// question covers both the action and values that need confirming anyway (confirm_if_uncertain), so the
// user is asked once. What the user confirmed is exactly what runs: the shown values are kept.
import type { CapabilitySpec } from '../protocol/types.js';
import type { PluginRecord } from '../registry/record.js';
import { joinWithAnd, showValue, sourcePhrase } from './questions.js';
import type { ResolvedValue } from './resolver-api.js';

/** What the conversation asks of the access rules (src/access/policy.ts implements it). */
export interface ConversationAccess {
  /** Whether the user may reach at least one capability of the plugin (what retrieval may offer). */
  mayReachPlugin(userId: string, record: PluginRecord): boolean;
  /** The capability flags itself or the operator's policy names it. */
  requiresConfirmation(pluginId: string, capability: CapabilitySpec): boolean;
}

/** Values worth showing: not the request's own context (time, user, channel), which the user cannot change. */
function shown(values: ResolvedValue[]): ResolvedValue[] {
  return values.filter((value) => value.source !== 'system');
}

function describeValue(value: ResolvedValue): string {
  const personal = value.source === 'profile' || value.source === 'config';
  return `${value.name} ${showValue(value.value)}${personal ? ` (${sourcePhrase(value.source)})` : ''}`;
}

/** "Please confirm: Unlock (Door lock) with door "back". Reply "yes" to go ahead, or "cancel"." */
export function confirmationQuestion(record: PluginRecord, capability: CapabilitySpec, values: ResolvedValue[]): string {
  const visible = shown(values);
  const what = `${capability.name} (${record.descriptor.name})`;
  const withValues = visible.length > 0 ? ` with ${joinWithAnd(visible.map(describeValue))}` : '';
  const correctable = visible.find((value) => value.source !== 'explicit' && value.source !== 'default') ?? visible[0];
  const correction = correctable ? `, give corrected values (e.g. ${correctable.name}=...)` : '';
  return `Please confirm: ${what}${withValues}. Reply "yes" to go ahead${correction}, or "cancel".`;
}

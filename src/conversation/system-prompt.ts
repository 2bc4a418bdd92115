// What the model is told: only the retrieved plugins, their capabilities and the parameters it may fill.
// Parameters filled from trusted config (use_default_directly_for) are left out: the model need not and
// must not fill them. Plugin config never appears.
import type { CapabilitySpec, ParameterSpec } from '../protocol/types.js';
import type { PluginRecord } from '../registry/record.js';
import type { ParameterResolver, SystemContext } from './resolver-api.js';

export interface PromptPlugin {
  record: PluginRecord;
  /** Capability ids, best match first; the plugin's own order when absent. */
  capability_order?: string[];
}

export function describeParameter(parameter: ParameterSpec): string {
  const parts = [`${parameter.name} (${parameter.type}${parameter.required ? ', required' : ', optional'})`];
  if (parameter.description) parts.push(parameter.description);
  if (parameter.enum && parameter.enum.length > 0) parts.push(`one of: ${parameter.enum.map((v) => JSON.stringify(v)).join(', ')}`);
  return parts.join(' — ');
}

function orderedCapabilities(plugin: PromptPlugin): CapabilitySpec[] {
  const capabilities = plugin.record.descriptor.capabilities;
  if (!plugin.capability_order) return capabilities;
  const rank = new Map(plugin.capability_order.map((id, i) => [id, i]));
  return [...capabilities].sort((a, b) => (rank.get(a.id) ?? 1e9) - (rank.get(b.id) ?? 1e9));
}

/** One plugin as the model sees it (also used for find_plugins results). */
export function describePlugin(plugin: PromptPlugin, resolver: ParameterResolver): string {
  const descriptor = plugin.record.descriptor;
  const lines = [`### ${descriptor.id}: ${descriptor.name}`, descriptor.description];
  if (descriptor.description_long) lines.push(descriptor.description_long);
  const defaultCapability = descriptor.capabilities[0]?.id;
  for (const capability of orderedCapabilities(plugin)) {
    const marker = capability.id === defaultCapability ? ' (default)' : '';
    lines.push(`- capability \`${capability.id}\`${marker}: ${capability.description}`);
    const visible = resolver.llmVisibleParameters(plugin.record, capability);
    if (visible.length === 0) lines.push('  parameters: none');
    for (const parameter of visible) lines.push(`  - ${describeParameter(parameter)}`);
  }
  return lines.join('\n');
}

export interface SystemPromptInput {
  plugins: PromptPlugin[];
  resolver: ParameterResolver;
  system: SystemContext;
}

export function buildSystemPrompt(input: SystemPromptInput): string {
  const header = [
    'You are HomeClaw, a home assistant. You act through plugins.',
    "To use a plugin, call the tool route_to_plugin with plugin_id, capability_id and the parameters you can take from the user's message.",
    'Only pass values the user gave or that follow clearly from the message; leave the rest out — the Core fills them from the profile and config, and asks the user itself when something is missing.',
    'If none of the plugins below fits, call find_plugins with a short description of what is needed. If no plugin is needed, answer directly and briefly.',
    `Current time: ${input.system.datetime} (${input.system.timezone}).${input.system.location ? ` User location: ${input.system.location}.` : ''}`,
  ];
  const body =
    input.plugins.length > 0
      ? input.plugins.map((plugin) => describePlugin(plugin, input.resolver)).join('\n\n')
      : '(no plugin matched this message; use find_plugins to search)';
  return `${header.join('\n')}\n\n## Available plugins\n\n${body}`;
}

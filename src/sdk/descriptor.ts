// Turns what the plugin author wrote into the canonical descriptor the SDK sends and works from.
// Normalising locally with the Core's own normaliser means a bad descriptor fails at connectPlugin,
// with every problem listed, instead of as a rejected registration later.
import { normalizeDescriptor } from '../protocol/descriptor/normalize.js';
import type { PluginDescriptor, ValidationIssue } from '../protocol/types.js';
import type { CapabilityHandlers, PluginDescriptorInput } from './types.js';

export type PreparedDescriptor = { ok: true; descriptor: PluginDescriptor } | { ok: false; errors: ValidationIssue[] };

export function prepareDescriptor(input: PluginDescriptorInput): PreparedDescriptor {
  const withDefaults = {
    ...input,
    type: 'mqtt',
    config: input.config ?? {},
    capabilities: (input.capabilities ?? []).map((capability) => ({
      ...capability,
      name: capability.name ?? capability.id,
      post_process: capability.post_process ?? false,
      parameters: (capability.parameters ?? []).map((parameter) => ({
        ...parameter,
        required: parameter.required ?? true,
      })),
    })),
  };
  const outcome = normalizeDescriptor(withDefaults, { source: 'external', default_type: 'mqtt' });
  if (!outcome.ok) return { ok: false, errors: outcome.errors };
  return { ok: true, descriptor: outcome.descriptor };
}

/** Every capability needs a handler and every handler a capability: a mismatch is a typo worth failing on. */
export function checkHandlers(descriptor: PluginDescriptor, handlers: CapabilityHandlers): ValidationIssue[] {
  const errors: ValidationIssue[] = [];
  const capabilityIds = new Set(descriptor.capabilities.map((c) => c.id));
  descriptor.capabilities.forEach((capability, index) => {
    if (typeof handlers[capability.id] !== 'function') {
      errors.push({ path: `/capabilities/${index}`, message: `no handler for capability "${capability.id}"` });
    }
  });
  for (const id of Object.keys(handlers)) {
    if (!capabilityIds.has(id)) {
      errors.push({ path: `/handlers/${id}`, message: `handler "${id}" matches no capability of the descriptor` });
    }
  }
  return errors;
}

/**
 * The descriptor as sent on the register topic: `source` is left out because the Core sets it and
 * never trusts it from a plugin.
 */
export function wireDescriptor(descriptor: PluginDescriptor): Omit<PluginDescriptor, 'source'> {
  const { source: _source, ...rest } = descriptor;
  return rest;
}

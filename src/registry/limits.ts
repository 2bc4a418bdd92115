// How much one plugin may declare. Every capability and example becomes a document to embed and index,
// so an unbounded descriptor would let one registration occupy the encoder for seconds; the limits keep
// the work of one registration bounded and tell the author exactly which limit was hit.
import type { PluginDescriptor, ValidationIssue } from '../protocol/types.js';

export interface RegistrationLimits {
  /** Capabilities per plugin. */
  max_capabilities: number;
  /** Example utterances per plugin. */
  max_examples: number;
}

export const DEFAULT_REGISTRATION_LIMITS: RegistrationLimits = { max_capabilities: 256, max_examples: 32 };

/** Every limit the descriptor exceeds, each naming the setting that raises it. Empty when within limits. */
export function checkRegistrationLimits(descriptor: PluginDescriptor, limits: RegistrationLimits): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const capabilities = descriptor.capabilities.length;
  if (capabilities > limits.max_capabilities) {
    issues.push({
      path: '/capabilities',
      message: `plugin "${descriptor.id}" declares ${capabilities} capabilities; at most ${limits.max_capabilities} are allowed per plugin (limits.max_capabilities)`,
    });
  }
  const examples = descriptor.examples?.length ?? 0;
  if (examples > limits.max_examples) {
    issues.push({
      path: '/examples',
      message: `plugin "${descriptor.id}" declares ${examples} examples; at most ${limits.max_examples} are allowed per plugin (limits.max_examples)`,
    });
  }
  return issues;
}

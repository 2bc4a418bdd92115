// Which capability of a plugin a call means.

/**
 * The capability with this id; with no id (undefined or ''), the plugin's first capability. Capability
 * ids are never empty (the descriptor schema requires 1 to 64 characters), so '' can only mean "not given" and is read
 * the same as a missing id.
 * Undefined when the plugin has no such capability (or none at all).
 */
export function findCapability<C extends { id: string }>(descriptor: { capabilities: readonly C[] }, capabilityId: string | undefined): C | undefined {
  const capabilities = descriptor.capabilities;
  if (capabilityId === undefined || capabilityId === '') return capabilities[0];
  return capabilities.find((c) => c.id === capabilityId);
}

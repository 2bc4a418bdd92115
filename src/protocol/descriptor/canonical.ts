// The last gate: whatever a dialect produced must satisfy topics/schemas/descriptor.schema.json.
import { validateWithSchema, type Validated } from '../validate.js';
import type { PluginDescriptor } from '../types.js';

export function validateCanonicalDescriptor(value: unknown): Validated<PluginDescriptor> {
  return validateWithSchema<PluginDescriptor>('descriptor', value);
}

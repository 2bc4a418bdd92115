// The registry stores this hash beside each descriptor and retrieval re-embeds only when it changes,
// so it must not depend on key order or on undefined members.
import { createHash } from 'node:crypto';
import type { PluginDescriptor } from '../types.js';

/** JSON with object keys sorted at every level; undefined members dropped, as JSON.stringify does. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : sortKeys(item)));
  if (typeof value === 'object' && value !== null) {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key];
      if (member !== undefined) sorted[key] = sortKeys(member);
    }
    return sorted;
  }
  return value;
}

/** sha256 (hex) of the descriptor's canonical JSON. */
export function descriptorContentHash(descriptor: PluginDescriptor): string {
  return createHash('sha256').update(canonicalJson(descriptor)).digest('hex');
}

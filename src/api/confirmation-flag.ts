// Direct invokes of a capability that requires confirmation must say so: "confirmed": true in the body
// (next to the parameters) or ?confirmed=true. A capability that has a parameter named "confirmed"
// keeps it as a parameter; its callers confirm with the query form.
import type { CapabilitySpec, JsonObject } from '../protocol/types.js';

export type ConfirmationFlag = { ok: true; confirmed: boolean; parameters: JsonObject } | { ok: false; path: string; error: string };

const QUERY_VALUES: Record<string, boolean> = { true: true, '1': true, false: false, '0': false };

/** Separates the confirmation from the parameters; a malformed flag is an error, never silently false. */
export function readConfirmation(
  body: JsonObject,
  query: Record<string, unknown>,
  capability: Pick<CapabilitySpec, 'parameters'> | undefined,
): ConfirmationFlag {
  let confirmed = false;
  const raw = query.confirmed;
  if (raw !== undefined) {
    const value = typeof raw === 'string' ? QUERY_VALUES[raw] : undefined;
    if (value === undefined) return { ok: false, path: '/confirmed', error: `confirmed must be true or false, got ${JSON.stringify(raw)}` };
    confirmed = value;
  }
  const isParameter = capability?.parameters.some((p) => p.name === 'confirmed') ?? false;
  if (isParameter || !('confirmed' in body)) return { ok: true, confirmed, parameters: body };
  const { confirmed: inBody, ...parameters } = body;
  if (typeof inBody !== 'boolean') return { ok: false, path: '/confirmed', error: `"confirmed" must be true or false, got ${JSON.stringify(inBody)}` };
  return { ok: true, confirmed: confirmed || inBody, parameters };
}

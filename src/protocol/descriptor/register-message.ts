// A register message is a descriptor plus liveness fields. Both parts are checked together so the
// rejection lists every problem at once (envelope and descriptor), with its path.
import type { PluginDescriptor, ValidationIssue } from '../types.js';
import { validatePayload } from '../validate.js';
import { detectDialect, normalizeDescriptor } from './normalize.js';
import type { Dialect, NormalizeOptions } from './normalize-options.js';
import { isPlainObject } from '../../kit/plain-object.js';

export type RegisterParse =
  | {
      ok: true;
      descriptor: PluginDescriptor;
      dialect: Dialect;
      epoch: number;
      heartbeat_interval_sec?: number;
      warnings?: ValidationIssue[];
    }
  | { ok: false; errors: ValidationIssue[] /** The id the message claimed, as given, for the ack. */; claimed_id: string | null };

/**
 * The plugin id a descriptor claims, exactly as given (possibly invalid), or null. Use isPluginId on it
 * to choose between homeclaw/plugins/registered/<id> and .../registered/_invalid for the ack.
 */
export function claimedPluginId(input: unknown): string | null {
  if (!isPlainObject(input)) return null;
  const dialect = detectDialect(input);
  const candidates = dialect === 'homeclaw' ? [input['id'], input['plugin_id']] : [input['id'], input['name']];
  const found = candidates.find((value) => value !== undefined && value !== null);
  return typeof found === 'string' ? found : null;
}

export function parseRegisterMessage(value: unknown, options: NormalizeOptions): RegisterParse {
  const envelope = validatePayload('register', value);
  const errors: ValidationIssue[] = envelope.ok ? [] : [...envelope.errors];
  const normalized = normalizeDescriptor(value, options);
  if (!normalized.ok) {
    const seen = new Set(errors.map((issue) => issue.path));
    // The register schema also types name/description/...; keep one message per path.
    for (const issue of normalized.errors) if (!seen.has(issue.path)) errors.push(issue);
  }
  if (errors.length > 0 || !normalized.ok || !envelope.ok) {
    return { ok: false, errors, claimed_id: claimedPluginId(value) };
  }
  const result: RegisterParse = {
    ok: true,
    descriptor: normalized.descriptor,
    dialect: normalized.dialect,
    epoch: envelope.value.epoch,
  };
  if (typeof envelope.value.heartbeat_interval_sec === 'number') result.heartbeat_interval_sec = envelope.value.heartbeat_interval_sec;
  if (normalized.warnings) result.warnings = normalized.warnings;
  return result;
}

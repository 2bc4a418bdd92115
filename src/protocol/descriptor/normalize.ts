// Every way a plugin can describe itself ends here as one canonical PluginDescriptor
// (topics/schemas/descriptor.schema.json), the only form the rest of the Core sees.
import type { PluginDescriptor, ValidationIssue } from '../types.js';
import { validateCanonicalDescriptor } from './canonical.js';
import { normalizeForgeSyte } from './forgesyte.js';
import { normalizeHomeClaw } from './homeclaw.js';
import { IssueList, describe } from './issues.js';
import type { Dialect, NormalizeOptions } from './normalize-options.js';
import { normalizeRagFlow } from './ragflow.js';
import { reachabilityProblems } from './reachability.js';
import { errorMessage } from '../../kit/error-message.js';
import { isPlainObject } from '../../kit/plain-object.js';

export type { Dialect, NormalizeOptions } from './normalize-options.js';
export { descriptorContentHash, canonicalJson } from './content-hash.js';

export type NormalizeOutcome =
  | {
      ok: true;
      descriptor: PluginDescriptor;
      dialect: Dialect;
      /** Fields that were ignored (unknown keys, a 'source' sent by the plugin): worth logging. */
      warnings?: ValidationIssue[];
    }
  | { ok: false; errors: ValidationIssue[] };

/**
 * HomeClaw wins whenever its markers are present (it is also the canonical form); ForgeSyte is known by
 * its tools map, RAGFlow by its parameters map. Anything else is read as HomeClaw so the author gets
 * HomeClaw's "id is required"-style errors.
 */
export function detectDialect(input: Record<string, unknown>): Dialect {
  if (input['capabilities'] !== undefined || input['plugin_id'] !== undefined) return 'homeclaw';
  if (isPlainObject(input['tools'])) return 'forgesyte';
  if (isPlainObject(input['parameters'])) return 'ragflow';
  return 'homeclaw';
}

/** Detects the dialect, normalises to the canonical descriptor and validates it; lists every error with its path. */
export function normalizeDescriptor(input: unknown, options: NormalizeOptions): NormalizeOutcome {
  if (!isPlainObject(input)) {
    return { ok: false, errors: [{ path: '', message: `descriptor must be a JSON object, not ${describe(input)}` }] };
  }
  const dialect = detectDialect(input);
  const issues = new IssueList();
  const normalizers = { homeclaw: normalizeHomeClaw, forgesyte: normalizeForgeSyte, ragflow: normalizeRagFlow };
  let descriptor: PluginDescriptor | undefined;
  try {
    descriptor = normalizers[dialect](input, options, issues);
  } catch (error) {
    // Defensive: a normaliser bug must surface as a rejection, never as an exception in a message handler.
    issues.error('', `descriptor could not be read: ${errorMessage(error)}`);
  }
  if (issues.hasErrors || !descriptor) {
    return { ok: false, errors: issues.errors.length > 0 ? issues.errors : [{ path: '', message: 'descriptor is invalid' }] };
  }
  const checked = validateCanonicalDescriptor(descriptor);
  if (!checked.ok) return { ok: false, errors: checked.errors };
  const unreachable = reachabilityProblems(checked.value);
  if (unreachable.length > 0) return { ok: false, errors: unreachable };
  const outcome: NormalizeOutcome = { ok: true, descriptor: checked.value, dialect };
  if (issues.warnings.length > 0) outcome.warnings = issues.warnings;
  return outcome;
}

// Validation of a config tree against the schema, filling every missing key with the schema's default
// (Ajv `useDefaults`). Compiled once: the loader and the defaults share it.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { CONFIG_SCHEMA } from './schema.js';
import type { CoreConfig } from './types.js';

let compiled: ValidateFunction | undefined;

function validator(): ValidateFunction {
  compiled ??= new Ajv({ allErrors: true, strict: false, useDefaults: true }).compile(CONFIG_SCHEMA);
  return compiled;
}

/**
 * Fills the missing keys of `tree` (changed in place) and checks it; the errors are Ajv's, every one of
 * them (allErrors), or an empty list.
 */
export function validateConfigTree(tree: Record<string, unknown>): ErrorObject[] {
  const validate = validator();
  return validate(tree) ? [] : [...(validate.errors ?? [])];
}

/** The configuration of an empty file: every key at its schema default. */
export function applyConfigDefaults(): CoreConfig {
  const tree: Record<string, unknown> = {};
  const errors = validateConfigTree(tree);
  if (errors.length > 0) throw new Error(`the config schema's defaults are invalid: ${JSON.stringify(errors)}`);
  return tree as CoreConfig;
}

// The environment of every process the Core starts for a plugin (subprocess plugins, MCP stdio
// servers, and any later child-process host). The Core's own environment holds its secrets (the admin
// token, the LLM key, the broker password), so a child never inherits it: it gets only what a program
// needs to run in this place and language, plus exactly what its manifest's `env` sets.
import type { JsonValue } from '../protocol/types.js';
import { isPlainObject } from '../kit/plain-object.js';

const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';

/** Variable names a manifest may set: the POSIX portable set. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Variables passed through from the Core: where programs are, the user's home, language and time zone. */
export const INHERITED_VARIABLES = ['PATH', 'HOME', 'LANG', 'TZ'] as const;

/**
 * Builds a child's environment: the inherited variables present in `parent`, then the manifest's `env`
 * (strings as they are, numbers and booleans as text, objects as JSON; null leaves a variable unset).
 */
export function buildChildEnv(manifestEnv: Record<string, JsonValue | undefined> | undefined, parent: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_VARIABLES) {
    const value = parent[name];
    if (value !== undefined) env[name] = value;
  }
  // Without a PATH a child could not find an interpreter or a tool by name.
  env.PATH ??= DEFAULT_PATH;
  if (!manifestEnv) return env;
  for (const [name, value] of Object.entries(manifestEnv)) {
    if (value === undefined || value === null) delete env[name];
    else env[name] = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return env;
}

/** The manifest's `config.env` when it is an object, else nothing. */
export function manifestEnvOf(value: JsonValue | undefined): Record<string, JsonValue> | undefined {
  return isPlainObject(value) ? value : undefined;
}

export interface ChildEnvReport {
  env: Record<string, string>;
  /** Manifest entries that were skipped, with the reason (the caller logs them). */
  ignored: string[];
}

/** buildChildEnv for a manifest's raw `config.env`, skipping (and reporting) what is not a variable. */
export function buildChildEnvReport(declared: JsonValue | undefined, parent: NodeJS.ProcessEnv = process.env): ChildEnvReport {
  const ignored: string[] = [];
  const manifestEnv: Record<string, JsonValue> = {};
  if (declared !== undefined && declared !== null) {
    const mapping = manifestEnvOf(declared);
    if (!mapping) ignored.push('config.env must be a mapping of variable names to values');
    for (const [name, value] of Object.entries(mapping ?? {})) {
      if (VARIABLE_NAME.test(name)) manifestEnv[name] = value;
      else ignored.push(`${name}: not a valid variable name`);
    }
  }
  return { env: buildChildEnv(manifestEnv, parent), ignored };
}

// The environment of a Python plugin host: only what a program needs to run (PATH, HOME, LANG, TZ from
// the Core's own environment) plus the variables the plugin's manifest sets explicitly in `config.env`.
// Everything else the Core holds in its environment (HOMECLAW_* settings, API keys, tokens) stays in the
// Core: a plugin is code someone else wrote.
import type { JsonValue } from '../../protocol/types.js';

const INHERITED = ['PATH', 'HOME', 'LANG', 'TZ'] as const;

/** Variable names a manifest may set: the POSIX portable set. */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface ChildEnvOutcome {
  env: Record<string, string>;
  /** Manifest entries that were skipped, with the reason (logged by the caller). */
  ignored: string[];
}

export function pythonChildEnv(parent: NodeJS.ProcessEnv, declared: JsonValue | undefined): ChildEnvOutcome {
  const env: Record<string, string> = {};
  const ignored: string[] = [];
  for (const name of INHERITED) {
    const value = parent[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  if (declared !== undefined && declared !== null) {
    if (typeof declared !== 'object' || Array.isArray(declared)) {
      ignored.push('config.env must be a mapping of variable names to values');
    } else {
      for (const [name, value] of Object.entries(declared)) {
        if (!NAME.test(name)) ignored.push(`${name}: not a valid variable name`);
        else if (value === null) delete env[name];
        else env[name] = typeof value === 'string' ? value : JSON.stringify(value);
      }
    }
  }
  return { env, ignored };
}

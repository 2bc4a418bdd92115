// Policy patterns name a plugin or one of its capabilities: `lock`, `lock.unlock`, `lock.*`, `*.delete_*`,
// `home-*`. `*` stands for any run of characters inside one part (never across the dot). A pattern with
// no capability part covers every capability of the plugins it names.

/** Plugin part: plugin-id characters and *; capability part: capability-id characters and *. */
export const POLICY_PATTERN = /^[a-z0-9_*-]{1,64}(?:\.[A-Za-z0-9_*-]{1,64})?$/;

export interface CompiledGlob {
  source: string;
  matches(pluginId: string, capabilityId: string): boolean;
  /** True when the pattern may cover some capability of this plugin. */
  matchesPlugin(pluginId: string): boolean;
}

export function isPolicyPattern(value: unknown): value is string {
  return typeof value === 'string' && POLICY_PATTERN.test(value);
}

export function explainBadPolicyPattern(value: unknown): string {
  return `policy pattern ${JSON.stringify(value)} must be "plugin" or "plugin.capability", where * stands for any characters (e.g. lock, lock.unlock, lock.*, *.delete_*)`;
}

/** The allowed characters are all literal in a regular expression, except * which becomes .* */
function partRegex(part: string): RegExp {
  return new RegExp(`^${part.replace(/\*/g, '.*')}$`);
}

export function compileGlob(pattern: string): CompiledGlob {
  if (!isPolicyPattern(pattern)) throw new Error(explainBadPolicyPattern(pattern));
  const dot = pattern.indexOf('.');
  const plugin = partRegex(dot === -1 ? pattern : pattern.slice(0, dot));
  const capability = dot === -1 ? undefined : partRegex(pattern.slice(dot + 1));
  return {
    source: pattern,
    matches: (pluginId, capabilityId) => plugin.test(pluginId) && (capability === undefined || capability.test(capabilityId)),
    matchesPlugin: (pluginId) => plugin.test(pluginId),
  };
}

/** The first pattern of the list that matches, or undefined. */
export function firstMatch(globs: readonly CompiledGlob[], pluginId: string, capabilityId: string): CompiledGlob | undefined {
  return globs.find((glob) => glob.matches(pluginId, capabilityId));
}

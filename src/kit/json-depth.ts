// How deep a parsed JSON value nests. The input may be hostile: the walk descends at most `limit + 1`
// levels, so it cannot overflow the stack however deep the value goes.

/**
 * True when `value` nests objects and arrays more than `limit` levels deep ({} and [] are one level,
 * a scalar none). Stops at the first path that goes too deep.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (limit <= 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestsDeeperThan(item, limit - 1)) return true;
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) if (nestsDeeperThan(record[key], limit - 1)) return true;
  return false;
}

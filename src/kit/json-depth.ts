// How deep a parsed JSON value nests, measured without recursion: the input may be hostile, and a
// recursive walk is exactly what overflows on it.

/**
 * True when `value` nests objects and arrays more than `limit` levels deep ({} and [] are one level,
 * a scalar none). Stops at the first path that goes too deep.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: [object, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (depth > limit) return true;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from '../../src/kit/json-depth.js';

/** An array nested `depth` levels deep, built without recursion. */
function nested(depth: number, inner: unknown = 1): unknown {
  let value: unknown = inner;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

describe('nestsDeeperThan', () => {
  it('counts objects and arrays, not scalars', () => {
    expect(nestsDeeperThan(null, 0)).toBe(false);
    expect(nestsDeeperThan('text', 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: 'x' }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: [] }] }, 3)).toBe(true);
  });

  it('draws the line exactly at the limit, whichever branch goes deep', () => {
    expect(nestsDeeperThan(nested(64), 64)).toBe(false);
    expect(nestsDeeperThan(nested(65), 64)).toBe(true);
    expect(nestsDeeperThan({ shallow: 1, list: [0, 0, nested(64)] }, 64)).toBe(true);
  });

  it('answers on values far deeper than the stack could walk', () => {
    const deep = nested(200_000);
    expect(() => nestsDeeperThan(deep, 64)).not.toThrow();
    expect(nestsDeeperThan(deep, 64)).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { isPlainObject } from '../../src/kit/plain-object.js';

describe('isPlainObject', () => {
  it('accepts {...} values, including empty ones and those without a prototype', () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject({ a: 1 })).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
  });

  it('refuses null, arrays and primitives', () => {
    for (const value of [null, undefined, [], [1], 'x', 0, true]) expect(isPlainObject(value), String(value)).toBe(false);
  });
});

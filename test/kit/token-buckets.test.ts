import { describe, expect, it } from 'vitest';
import { TokenBuckets } from '../../src/kit/token-buckets.js';

describe('TokenBuckets', () => {
  it('lets a key spend a burst of perMinute, then refills at perMinute a minute; keys are independent', () => {
    let now = 0;
    const buckets = new TokenBuckets(3, () => now);
    expect([buckets.take('a'), buckets.take('a'), buckets.take('a'), buckets.take('a')]).toEqual([true, true, true, false]);
    expect(buckets.take('b')).toBe(true);
    now = 19_999;
    expect(buckets.take('a')).toBe(false);
    now = 20_000;
    expect(buckets.take('a')).toBe(true);
    expect(buckets.take('a')).toBe(false);
  });

  it('waitMs says how long until the next token without spending one', () => {
    let now = 0;
    const buckets = new TokenBuckets(6, () => now);
    expect(buckets.waitMs('a')).toBe(0);
    for (let i = 0; i < 6; i++) buckets.take('a');
    expect(buckets.waitMs('a')).toBe(10_000);
    expect(buckets.waitMs('a')).toBe(10_000);
    now = 4_000;
    expect(buckets.waitMs('a')).toBe(6_000);
    now = 10_000;
    expect(buckets.waitMs('a')).toBe(0);
    expect(buckets.take('a')).toBe(true);
  });
});

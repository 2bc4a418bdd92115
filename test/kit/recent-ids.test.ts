import { describe, expect, it } from 'vitest';
import { RecentIds } from '../../src/kit/recent-ids.js';

describe('RecentIds', () => {
  it('knows the ids added, up to the limit', () => {
    const recent = new RecentIds(3);
    for (const id of ['a', 'b', 'c']) recent.add(id);
    expect(['a', 'b', 'c'].map((id) => recent.has(id))).toEqual([true, true, true]);
    expect(recent.has('d')).toBe(false);
  });

  it('forgets the oldest id when a new one comes past the limit', () => {
    const recent = new RecentIds(3);
    for (const id of ['a', 'b', 'c', 'd']) recent.add(id);
    expect(recent.has('a')).toBe(false);
    expect(['b', 'c', 'd'].map((id) => recent.has(id))).toEqual([true, true, true]);
    recent.add('e');
    expect(recent.has('b')).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { PendingConnections } from '../../src/bus/pending-connections.js';

describe('PendingConnections', () => {
  it('bounds waiting connections per address and in total; a settled one frees its place', () => {
    const pending = new PendingConnections<object>({ perAddress: 2, total: 3 });
    const [a1, a2, a3, b1, c1] = [{}, {}, {}, {}, {}];
    expect(pending.admit(a1, 'a')).toBeUndefined();
    expect(pending.admit(a2, 'a')).toBeUndefined();
    expect(pending.admit(a3, 'a')).toBe('2 connections from a have not logged in yet');
    expect(pending.admit(b1, 'b')).toBeUndefined();
    expect(pending.admit(c1, 'c')).toBe('3 connections have not logged in yet');
    pending.settle(a1);
    pending.settle(a1); // twice is harmless
    expect(pending.size).toBe(2);
    expect(pending.admit(a3, 'a')).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { PendingConnections } from '../../src/bus/pending-connections.js';

describe('PendingConnections', () => {
  it('over the limit of an address, the oldest connection from that address makes room', () => {
    const pending = new PendingConnections<object>({ perAddress: 2, total: 10 });
    const [a1, a2, a3, b1] = [{}, {}, {}, {}];
    expect(pending.admit(a1, 'a')).toBeUndefined();
    expect(pending.admit(b1, 'b')).toBeUndefined();
    expect(pending.admit(a2, 'a')).toBeUndefined();
    expect(pending.admit(a3, 'a')).toEqual({ connection: a1, address: 'a', reason: '2 connections from a have not sent their login yet' });
    expect(pending.size).toBe(3);
    // a1 no longer counts: settling it (its close) changes nothing.
    pending.settle(a1);
    expect(pending.size).toBe(3);
  });

  it('over the total, the oldest connection of any address makes room', () => {
    const pending = new PendingConnections<object>({ perAddress: 5, total: 3 });
    const [a1, b1, c1, d1] = [{}, {}, {}, {}];
    pending.admit(a1, 'a');
    pending.admit(b1, 'b');
    pending.admit(c1, 'c');
    expect(pending.admit(d1, 'd')).toEqual({ connection: a1, address: 'a', reason: '3 connections have not sent their login yet' });
    expect(pending.admit({}, 'd')).toMatchObject({ connection: b1, address: 'b' });
  });

  it('a connection that sent its login or closed frees its place; settling twice is harmless', () => {
    const pending = new PendingConnections<object>({ perAddress: 2, total: 3 });
    const [a1, a2, a3] = [{}, {}, {}];
    pending.admit(a1, 'a');
    pending.admit(a2, 'a');
    pending.settle(a1);
    pending.settle(a1);
    expect(pending.size).toBe(1);
    expect(pending.admit(a3, 'a')).toBeUndefined();
    expect(pending.size).toBe(2);
  });
});

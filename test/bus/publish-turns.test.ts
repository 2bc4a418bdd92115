import { describe, expect, it } from 'vitest';
import { PublishTurns } from '../../src/bus/publish-turns.js';

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('PublishTurns', () => {
  it('admits a share per client per turn at once and the rest in later turns, in order', async () => {
    const turns = new PublishTurns(3);
    const flooder = {};
    const quiet = {};
    const order: string[] = [];
    for (let i = 0; i < 8; i++) turns.admit(flooder, () => order.push(`f${i}`));
    turns.admit(quiet, () => order.push('q0'));
    expect(order).toEqual(['f0', 'f1', 'f2', 'q0']);
    expect(turns.waiting()).toBe(5);
    await nextTurn();
    expect(order.slice(4)).toEqual(['f3', 'f4', 'f5']);
    await nextTurn();
    await nextTurn();
    expect(order.slice(7)).toEqual(['f6', 'f7']);
    expect(turns.waiting()).toBe(0);
  });

  it('a client admitted in a later turn while others still wait goes behind them', async () => {
    const turns = new PublishTurns(1);
    const client = {};
    const order: number[] = [];
    turns.admit(client, () => order.push(1));
    turns.admit(client, () => order.push(2));
    turns.admit(client, () => order.push(3));
    await nextTurn();
    turns.admit(client, () => order.push(4));
    await nextTurn();
    await nextTurn();
    await nextTurn();
    expect(order).toEqual([1, 2, 3, 4]);
  });

  it('a client within its share never waits, turn after turn', async () => {
    const turns = new PublishTurns(2);
    const client = {};
    let ran = 0;
    for (let turn = 0; turn < 5; turn++) {
      turns.admit(client, () => ran++);
      turns.admit(client, () => ran++);
      expect(ran).toBe(2 * (turn + 1));
      await nextTurn();
    }
  });
});

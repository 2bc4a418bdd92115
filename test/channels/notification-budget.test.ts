import { describe, expect, it } from 'vitest';
import { NotificationBudget } from '../../src/channels/notification-budget.js';

describe('NotificationBudget', () => {
  it('allows a burst of perMinute per plugin and user, then refills at that rate', () => {
    let now = 0;
    const budget = new NotificationBudget(3, () => now);
    expect([1, 2, 3, 4].map(() => budget.take('doorbell', 'alice'))).toEqual([true, true, true, false]);
    // Another user, another plugin: their own budgets.
    expect(budget.take('doorbell', 'bob')).toBe(true);
    expect(budget.take('camera', 'alice')).toBe(true);
    now = 20_000; // a third of a minute: one message back
    expect(budget.take('doorbell', 'alice')).toBe(true);
    expect(budget.take('doorbell', 'alice')).toBe(false);
    now = 10 * 60_000; // refills up to perMinute, never beyond
    expect([1, 2, 3, 4].map(() => budget.take('doorbell', 'alice'))).toEqual([true, true, true, false]);
  });
});

// Calls per minute and each plugin's last outcome, on a clock the test moves.
import { describe, expect, it } from 'vitest';
import { InvocationActivity } from '../../../../src/bridges/homeassistant/discovery/activity.js';

const finished = (plugin_id: string, success: boolean, duration_ms: number, error_code?: 'timeout') => ({
  request_id: 'r',
  plugin_id,
  capability_id: 'c',
  success,
  duration_ms,
  ...(error_code ? { error_code } : {}),
});

describe('InvocationActivity', () => {
  it('counts the calls of the last 60 seconds only', () => {
    let now = 1_000_000;
    const activity = new InvocationActivity(() => now);
    for (let i = 0; i < 5; i++) activity.record(finished('a', true, 3));
    now += 30_000;
    activity.record(finished('b', true, 3));
    expect(activity.callsPerMinute()).toBe(6);
    now += 31_000; // the first five are now 61 s old
    expect(activity.callsPerMinute()).toBe(1);
    now += 60_000;
    expect(activity.callsPerMinute()).toBe(0);
  });

  it("keeps each plugin's last outcome and latency, and forgets a removed plugin", () => {
    const activity = new InvocationActivity(() => 0);
    activity.record(finished('a', true, 12.6));
    activity.record(finished('a', false, 30_000, 'timeout'));
    expect(activity.lastOf('a')).toEqual({ outcome: 'timeout', latency_ms: 30_000 });
    activity.forget('a');
    expect(activity.lastOf('a')).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { parsePointInTime } from '../../src/access/time-window.js';

const now = Date.UTC(2026, 10, 26, 12, 0, 0);

describe('parsePointInTime', () => {
  it('reads durations ago, ISO dates and date-times, and epoch milliseconds', () => {
    expect(parsePointInTime('30s', now)).toEqual({ ok: true, ms: now - 30_000 });
    expect(parsePointInTime('15m', now)).toEqual({ ok: true, ms: now - 900_000 });
    expect(parsePointInTime('1h', now)).toEqual({ ok: true, ms: now - 3_600_000 });
    expect(parsePointInTime('7d', now)).toEqual({ ok: true, ms: now - 7 * 86_400_000 });
    expect(parsePointInTime('2W', now)).toEqual({ ok: true, ms: now - 14 * 86_400_000 });
    expect(parsePointInTime('2026-11-26', now)).toEqual({ ok: true, ms: Date.UTC(2026, 10, 26) });
    expect(parsePointInTime('2026-11-26T14:00:00Z', now)).toEqual({ ok: true, ms: Date.UTC(2026, 10, 26, 14) });
    expect(parsePointInTime('2026-11-26T14:00:00+02:00', now)).toEqual({ ok: true, ms: Date.UTC(2026, 10, 26, 12) });
    expect(parsePointInTime('1764158400000', now)).toEqual({ ok: true, ms: 1764158400000 });
  });

  it('refuses anything else with the accepted forms in the message', () => {
    for (const bad of ['', 'yesterday', '1 hour', '-1h', '1y', '2026-13-45', '12', 'last tuesday']) {
      const parsed = parsePointInTime(bad, now);
      expect(parsed.ok, bad).toBe(false);
      if (!parsed.ok) expect(parsed.error).toMatch(/30s, 15m, 1h, 7d/);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { LogWindow } from '../../src/kit/log-window.js';

describe('LogWindow', () => {
  it('admits one line per key per window and reports how many were left out', () => {
    let now = 0;
    const window = new LogWindow(1000, () => now);
    expect(window.admit('a')).toBe(0);
    expect(window.admit('a')).toBeUndefined();
    expect(window.admit('a')).toBeUndefined();
    expect(window.admit('b')).toBe(0);
    now = 1000;
    expect(window.admit('a')).toBe(2);
    expect(window.admit('a')).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { LogWindow } from '../../src/kit/log-window.js';
import { memoryLogger } from '../helpers/memory-logger.js';

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

  it('warn logs the first line of a window and the count left out on the next one', () => {
    let now = 0;
    const window = new LogWindow(1000, () => now);
    const { log, lines } = memoryLogger();
    for (let i = 0; i < 3; i++) window.warn(log, 'client-a', { topic: 't' }, 'publish denied');
    now = 1000;
    window.warn(log, 'client-a', { topic: 't' }, 'publish denied', 'dropped');
    expect(lines.map((line) => [line.msg, line.topic, line.similar_not_logged, line.dropped])).toEqual([
      ['publish denied', 't', undefined, undefined],
      ['publish denied', 't', undefined, 2],
    ]);
  });

  it('info writes at info level with the same window', () => {
    let now = 0;
    const window = new LogWindow(1000, () => now);
    const { log, lines } = memoryLogger();
    window.info(log, 'k', {}, 'rejected');
    window.info(log, 'k', {}, 'rejected');
    now = 1000;
    window.info(log, 'k', {}, 'rejected');
    expect(lines.map((line) => [line.level, line.similar_not_logged])).toEqual([
      [30, undefined],
      [30, 1],
    ]);
  });
});

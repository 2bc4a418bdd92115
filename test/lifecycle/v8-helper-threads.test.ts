// Which V8 helper-thread count the Core was started with, read from Node's options as Node reads them,
// and when the operator is told to start it with fewer.
import { describe, expect, it } from 'vitest';
import { CORE_V8_POOL_FLAG, NODE_DEFAULT_V8_POOL_SIZE, v8HelperThreads, v8HelperThreadsAdvice } from '../../src/lifecycle/v8-helper-threads.js';

describe('v8HelperThreads', () => {
  it("is Node's default of 4 without the flag", () => {
    expect(NODE_DEFAULT_V8_POOL_SIZE).toBe(4);
    expect(v8HelperThreads([], undefined, 2)).toBe(4);
    expect(v8HelperThreads(['--expose-gc'], '--max-old-space-size=512', 2)).toBe(4);
  });

  it("reads the launchers' flag from the command line or NODE_OPTIONS, in both spellings", () => {
    expect(v8HelperThreads([CORE_V8_POOL_FLAG], undefined, 8)).toBe(1);
    expect(v8HelperThreads([], `--max-old-space-size=512 ${CORE_V8_POOL_FLAG}`, 8)).toBe(1);
    expect(v8HelperThreads(['--v8-pool-size', '2'], undefined, 8)).toBe(2);
    expect(v8HelperThreads(['--v8_pool_size=3'], undefined, 8)).toBe(3);
  });

  it('lets the command line win over NODE_OPTIONS, as Node does', () => {
    expect(v8HelperThreads(['--v8-pool-size=2'], '--v8-pool-size=1', 8)).toBe(2);
  });

  it('turns 0 into what Node picks from the cores: one fewer than there are, at least one', () => {
    expect(v8HelperThreads(['--v8-pool-size=0'], undefined, 8)).toBe(7);
    expect(v8HelperThreads(['--v8-pool-size=0'], undefined, 1)).toBe(1);
  });

  it('ignores a flag without a number', () => {
    expect(v8HelperThreads(['--v8-pool-size'], undefined, 2)).toBe(4);
    expect(v8HelperThreads(['--v8-pool-size=x'], undefined, 2)).toBe(4);
  });
});

describe('v8HelperThreadsAdvice', () => {
  it('tells the operator of a 2-core machine how to start the Core, naming the flag', () => {
    const advice = v8HelperThreadsAdvice(4, 2);
    expect(advice).toContain('2 cores');
    expect(advice).toContain('4 garbage-collection helper threads');
    expect(advice).toContain(`node ${CORE_V8_POOL_FLAG} dist/src/cli.js start`);
    expect(v8HelperThreadsAdvice(4, 1)).toContain('1 core and');
  });

  it('says nothing when the flag is in effect or the machine has cores to spare', () => {
    expect(v8HelperThreadsAdvice(1, 2)).toBeUndefined();
    expect(v8HelperThreadsAdvice(4, 4)).toBeUndefined();
  });
});

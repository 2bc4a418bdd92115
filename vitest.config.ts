import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Tests start brokers, Chroma and child processes; two cores cannot run many files at once.
    maxConcurrency: 4,
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    pool: 'forks',
  },
});

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/hostile/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The JSON report feeds scripts/test-summary.mjs (CI's closing line).
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results/unit.json' },
  },
});

// The end-to-end tier: not part of `npm test`. Run with `npm run test:e2e`.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/e2e/**/*.e2e.ts'],
    testTimeout: 120_000,
    hookTimeout: 600_000,
    pool: 'forks',
    fileParallelism: false,
    // A real browser on a loaded 2-core CI machine: one retry of a step, as Playwright does on CI.
    retry: process.env.CI ? 1 : 0,
    reporters: ['verbose', 'json'],
    outputFile: { json: 'test-results/e2e.json' },
  },
});

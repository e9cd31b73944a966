import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Most files spend their time waiting on sockets, child processes and short poll intervals,
    // not on the CPU: more files at once than cores (vitest's default is cores - 1, one file at a
    // time on a 2-core machine). More than this starts to starve the tests that check schedules.
    maxWorkers: 4,
    // CI also writes a JSON report, which .ci/run turns into a plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: 'reports/vitest-results.json' },
  },
});

import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Files share their worker's modules instead of starting a worker and evaluating the exporter's
    // module graph again for each file, which was about half the CPU of a run. Each test still
    // builds its own registry, servers and exporter; the hooks every file needs are in the setup
    // file (a module's own would hold for the first file that imports it).
    isolate: false,
    setupFiles: ['test/support/perFileHooks.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll's own default (1 s) is less than a busy machine may take to deliver a socket's
    // close or a log line; a condition that never comes still fails well within the test's time.
    expect: { poll: { timeout: 10_000 } },
    // Most files spend their time waiting on sockets, child processes and short poll intervals,
    // not on the CPU, so four files more than there are cores run at once (vitest's default is one
    // fewer: a single file at a time on 2 cores, and with two more the cores still sat idle part of
    // the run). The cases that check a schedule (test/faults/fairness.test.ts,
    // test/trunk/limits.test.ts) judge it against how late the machine held their timers, so a
    // busy machine does not fail them.
    maxWorkers: availableParallelism() + 4,
    // CI also writes a JSON report, which .ci/run turns into a plain "N passed, N failed" line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: { json: 'reports/vitest-results.json' },
  },
});

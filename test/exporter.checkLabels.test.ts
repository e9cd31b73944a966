// The `check` label of trunk_merge_queue_check_failures_total through a real exporter, over failed
// runs a fake organization lists poll after poll; the expected pages are written here from issue
// 39's rule ("the 20 most frequent per queue by name, the rest `other`") with counters that never
// go down: a name failing no more often than the least named one counts as `other`; one failing
// more takes its place and counts from then on; the one it displaces stops, and goes on from where
// it stopped once it takes a place back. Each run counts "each *required* check ... that concluded
// `failure` or `timeout` in a failed run, once per run" (`requiredStatuses`: "A check in `checks`
// is required iff its `name` is in this list").
import { afterEach, describe, expect, it } from 'vitest';
import { select, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import { WEB_QUEUE, entryRow, moveEntry, startFakeWebQueue } from './support/queueEntryRows.js';
import { run } from './support/verificationRunRows.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const QUEUE = { repo: 'github.com/acme/web', branch: 'main' };
const CHECKS = 'trunk_merge_queue_check_failures_total';
const now = () => Date.now() / 1000;

/** A check that failed, shaped as the definition's `Check`. */
const failing = (name: string, id: number) => ({
  id: String(31_300_000 + id),
  name,
  kind: 'checkRun',
  status: 'completed',
  conclusion: 'failure',
  providerStatus: 'COMPLETED',
  providerConclusion: 'FAILURE',
  url: `https://github.com/acme/web/runs/${String(31_300_000 + id)}`,
  provider: 'github',
});

/** The queue's series by check. */
const checkSeries = (samples: readonly Sample[]) =>
  Object.fromEntries(
    select(samples, CHECKS, QUEUE).map(({ labels, value }) => [labels.check ?? '', value]),
  );

/** Counts by check in name order, to compare whatever order the page lists them in. */
const inNameOrder = (counts: Record<string, number>) =>
  JSON.stringify(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));

const ones = (names: readonly string[]) => Object.fromEntries(names.map((name) => [name, 1]));
const names = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, index) => `check-${String(from + index)}`);

/**
 * A real exporter reading a fake organization's web@main, whose #7 is testing, once it has read
 * the queue's runs; the test adds runs and moves #7 so that a poll reads them.
 */
async function startCheckedQueue() {
  const start = Math.floor(now());
  const pr7 = entryRow(7, 'testing', start - 600);
  const fake = await startFakeWebQueue([pr7]);
  const runs = fake.verificationRuns(WEB_QUEUE);
  const exporter = await startTestExporter(
    configYaml({
      apiUrl: fake.origin,
      token: null,
      apiKey: 'trunk_v2_check-labels-key',
      targets: '  - repo: github.com/acme/web\n    branches: [main]',
      polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
    }),
  );
  await exporter.waitFor(
    (samples) => select(samples, 'trunk_merge_queue_verification_runs_total', QUEUE).length > 0,
    'the first read',
  );
  return { start, pr7, runs, exporter };
}

describe('check names through a real exporter', () => {
  it('keeps the 20 that fail most often, names a late frequent one from then on, and lowers no series from one page to the next', async () => {
    const { start, pr7, runs, exporter } = await startCheckedQueue();
    let created = start - 500;
    let page: Sample[] = [];
    /** Failed runs, one per list of failing required checks; #7 moves so that a poll reads them. */
    const step = async (
      failed: readonly (readonly string[])[],
      expected: Record<string, number>,
    ) => {
      for (const checks of failed) {
        created += 1;
        runs.push(
          run({
            id: `run-${String(created)}`,
            status: 'failed',
            createdAt: created,
            updatedAt: Math.ceil(now()),
            tested: [7],
            requiredStatuses: [...checks, 'build'],
            checks: checks.map((name, index) => failing(name, created * 10 + index)),
          }),
        );
      }
      moveEntry(pr7, pr7.queueEntry.state === 'testing' ? 'pending' : 'testing', now());
      const before = checkSeries(page);
      page = await exporter.waitFor(
        (samples) => inNameOrder(checkSeries(samples)) === inNameOrder(expected),
        inNameOrder(expected),
      );
      // A series on both pages is not lower on the later one.
      for (const [check, value] of Object.entries(checkSeries(page))) {
        expect(value, check).toBeGreaterThanOrEqual(before[check] ?? 0);
      }
    };
    // Twenty names fail a run each: each has its series.
    await step(
      names(1, 20).map((name) => [name]),
      ones(names(1, 20)),
    );
    // e2e fails a run: 1 against the least named's 1, not more: other.
    await step([['e2e']], { ...ones(names(1, 20)), other: 1 });
    // e2e fails again: 2 against 1, it takes the place of the last seen of the 1s (check-20) and
    // counts from this failure; check-20's series stops.
    await step([['e2e']], { ...ones(names(1, 19)), e2e: 1, other: 1 });
    // A run fails on e2e and check-20: e2e 2; check-20 now failed 2 runs against check-19's 1,
    // takes its place and goes on from the 1 it stopped at; check-19 stops.
    await step([['e2e', 'check-20']], {
      ...ones(names(1, 18)),
      'check-20': 2,
      e2e: 2,
      other: 1,
    });
  });
});

describe('an empty check name through a real exporter', () => {
  it('counts a required check whose name is empty under check="unknown", not an empty label', async () => {
    // `Check.name` is a string with no minLength; the same empty name in `requiredStatuses` makes
    // it required. To Prometheus an empty label value is no label at all.
    const { start, pr7, runs, exporter } = await startCheckedQueue();
    runs.push(
      run({
        id: 'run-empty-name',
        status: 'failed',
        createdAt: start - 400,
        updatedAt: Math.ceil(now()),
        tested: [7],
        requiredStatuses: ['', 'build'],
        checks: [failing('', 1), failing('lint', 2)],
      }),
    );
    moveEntry(pr7, 'pending', now());
    const page = await exporter.waitFor(
      (samples) => select(samples, CHECKS, QUEUE).length > 0,
      'the failed run counted',
    );
    expect(checkSeries(page)).toEqual({ unknown: 1 });
  });
});

// Verification runs in progress that no pull request in `testing` vouches for, through a real
// exporter holding an API key and polling a fake organization whose runs and entries the test moves
// by hand: each is read again at every poll until it concludes, and then counted once. From Trunk's
// definition: a run's `testedPullRequests` is "The pull requests included in this run" (a required
// array with no minimum: a run may list none); `testing` is "A verification run is in flight for
// this entry", so an entry in another state vouches for no run, and one testing since a restart for
// the run it tests on now; `status` `cancelled`: "the engine abandoned the run, typically because
// the entry left the queue or an entry ahead of it failed"; `updatedAt`: "For a finished run this
// approximates when it concluded".
import { afterEach, describe, expect, it } from 'vitest';
import type { ExporterUnderTest } from './support/exporterHarness.js';
import type { FakeV2 } from './support/fakeTrunkV2.js';
import { WEB_QUEUE, entryRow, moveEntry, startFakeWebQueue } from './support/queueEntryRows.js';
import {
  BATCH,
  DURATION,
  IN_PROGRESS,
  RUNS,
  conclude,
  runReads,
  series,
  webRunsExporter,
} from './support/verificationRunExporter.js';
import { run } from './support/verificationRunRows.js';
import { pollsFromNow } from './support/webQueueSamples.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const now = () => Date.now() / 1000;

/** The reads of the runs the next three polls make. */
async function readsOfThreePolls(fake: FakeV2, exporter: ExporterUnderTest): Promise<number> {
  const from = runReads(fake).length;
  await pollsFromNow(exporter, 3);
  return runReads(fake).length - from;
}

/**
 * The run families after the two polls that begin after now: concluded runs, runs in progress,
 * their seconds (updatedAt − createdAt) and the pull requests they tested; all without bisection.
 */
async function runFamiliesAfterTwoPolls(exporter: ExporterUnderTest) {
  await pollsFromNow(exporter, 2);
  const samples = await exporter.samples();
  return {
    concluded: series(samples, RUNS, 'status'),
    inProgress: series(samples, IN_PROGRESS, 'bisection').false,
    seconds: series(samples, DURATION + '_sum', 'status'),
    tested: {
      runs: series(samples, BATCH + '_count', 'bisection').false,
      pullRequests: series(samples, BATCH + '_sum', 'bisection').false,
    },
  };
}

describe('verification runs in progress with no pull request testing on them', () => {
  it('reads a run that tests no pull request, one whose pull request left `testing`, and one whose pull request tests on a newer run, at every poll until each concludes, and counts each once', async () => {
    const start = Math.floor(now());
    const pr7 = entryRow(7, 'testing', start - 600);
    const pr9 = entryRow(9, 'testing', start - 300);
    const fake = await startFakeWebQueue([pr7, entryRow(8, 'pending', start - 900), pr9]);
    // Run A tests #7 since 10 minutes before the start, run F #9 since 5; run E, created a minute
    // before the start, lists no pull request.
    const runA = { id: 'run-a', createdAt: start - 600, tested: [7] };
    const runF = { id: 'run-f', createdAt: start - 300, tested: [9] };
    const runE = { id: 'run-e', createdAt: start - 60, tested: [] };
    fake
      .verificationRuns(WEB_QUEUE)
      .push(
        ...[runE, runF, runA].map((shape) =>
          run({ ...shape, status: 'inProgress', updatedAt: shape.createdAt }),
        ),
      );
    const exporter = await webRunsExporter(fake);
    const first = await exporter.waitFor(
      (samples) => series(samples, IN_PROGRESS, 'bisection').false !== undefined,
      'the first read',
    );
    expect(series(first, IN_PROGRESS, 'bisection')).toEqual({ false: 3, true: 0 });

    // Run E is cancelled at the start; nothing in the queue moves.
    conclude(fake, { ...runE, status: 'cancelled', updatedAt: start });
    // updatedAt − createdAt: 60 s; it tested no pull request.
    expect(await runFamiliesAfterTwoPolls(exporter)).toEqual({
      concluded: { succeeded: 0, failed: 0, cancelled: 1 },
      inProgress: 2,
      seconds: { cancelled: 60 },
      tested: { runs: 1, pullRequests: 0 },
    });

    // #7 goes back to `pending` (Trunk concluded the entry before its run): run A, still in
    // progress, has no entry in `testing` left, and is read at each poll.
    moveEntry(pr7, 'pending', now());
    expect(await readsOfThreePolls(fake, exporter)).toBeGreaterThanOrEqual(3);
    // Cancelled a minute after the start: 660 s after it was created; it tested #7.
    conclude(fake, { ...runA, status: 'cancelled', updatedAt: start + 60 });
    expect(await runFamiliesAfterTwoPolls(exporter)).toEqual({
      concluded: { succeeded: 0, failed: 0, cancelled: 2 },
      inProgress: 1,
      seconds: { cancelled: 60 + 660 },
      tested: { runs: 2, pullRequests: 0 + 1 },
    });

    // #9 was restarted and tests again, on run G, before run F concluded: #9 vouches for G only,
    // and F is read at each poll.
    moveEntry(pr9, 'testing', now());
    fake.verificationRuns(WEB_QUEUE).unshift(
      run({
        id: 'run-g',
        status: 'inProgress',
        createdAt: start + 1,
        updatedAt: start + 1,
        tested: [9],
      }),
    );
    expect(await readsOfThreePolls(fake, exporter)).toBeGreaterThanOrEqual(3);
    expect(series(await exporter.samples(), IN_PROGRESS, 'bisection')).toEqual({
      false: 2,
      true: 0,
    });
    // Cancelled two minutes after the start: 420 s after it was created; it tested #9.
    conclude(fake, { ...runF, status: 'cancelled', updatedAt: start + 120 });
    expect(await runFamiliesAfterTwoPolls(exporter)).toEqual({
      concluded: { succeeded: 0, failed: 0, cancelled: 3 },
      inProgress: 1,
      seconds: { cancelled: 60 + 660 + 420 },
      tested: { runs: 3, pullRequests: 0 + 1 + 1 },
    });

    // Run G is in flight for #9, in `testing`, and nothing moves: no more reads.
    await pollsFromNow(exporter, 1);
    expect(await readsOfThreePolls(fake, exporter)).toBe(0);
  });
});

// Verification runs in progress that no pull request in `testing` vouches for, through a real
// exporter holding an API key and polling a fake organization whose runs and entries the test moves
// by hand: each is read again at every poll until it concludes, and then counted once. From Trunk's
// definition: a run's `testedPullRequests` is "The pull requests included in this run" (a required
// array with no minimum: a run may list none); `testing` is "A verification run is in flight for
// this entry", so an entry in another state vouches for no run in progress; `status` `cancelled`:
// "the engine abandoned the run, typically because the entry left the queue or an entry ahead of it
// failed"; `updatedAt`: "For a finished run this approximates when it concluded".
import { afterEach, describe, expect, it } from 'vitest';
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

describe('verification runs in progress with no pull request testing on them', () => {
  it('reads a run that tests no pull request, and one whose pull request left `testing`, at every poll until each concludes, and counts each once', async () => {
    const start = Math.floor(Date.now() / 1000);
    const pr7 = entryRow(7, 'testing', start - 600);
    const fake = await startFakeWebQueue([pr7, entryRow(8, 'pending', start - 900)]);
    // Run A tests #7 since 10 minutes before the start; run E, created a minute before it, lists no
    // pull request.
    const runA = { id: 'run-a', createdAt: start - 600, tested: [7] };
    const runE = { id: 'run-e', createdAt: start - 60, tested: [] };
    fake
      .verificationRuns(WEB_QUEUE)
      .push(
        run({ ...runE, status: 'inProgress', updatedAt: runE.createdAt }),
        run({ ...runA, status: 'inProgress', updatedAt: runA.createdAt }),
      );
    const exporter = await webRunsExporter(fake);
    const first = await exporter.waitFor(
      (samples) => series(samples, IN_PROGRESS, 'bisection').false !== undefined,
      'the first read',
    );
    expect(series(first, IN_PROGRESS, 'bisection')).toEqual({ false: 2, true: 0 });

    // Run E is cancelled at the start; nothing in the queue moves.
    conclude(fake, { ...runE, status: 'cancelled', updatedAt: start });
    await pollsFromNow(exporter, 2);
    const afterE = await exporter.samples();
    expect(series(afterE, RUNS, 'status')).toEqual({ succeeded: 0, failed: 0, cancelled: 1 });
    expect(series(afterE, IN_PROGRESS, 'bisection')).toEqual({ false: 1, true: 0 });
    // updatedAt − createdAt: 60 s; it tested 0 pull requests.
    expect(series(afterE, DURATION + '_sum', 'status')).toEqual({ cancelled: 60 });
    expect(series(afterE, BATCH + '_count', 'bisection')).toEqual({ false: 1 });
    expect(series(afterE, BATCH + '_sum', 'bisection')).toEqual({ false: 0 });
    expect(series(afterE, BATCH + '_bucket', 'le')).toMatchObject({ 1: 1 });

    // #7 goes back to `pending` (Trunk concluded the entry before its run): run A, still in
    // progress, has no entry in `testing` left, and is read at each poll.
    moveEntry(pr7, 'pending', Date.now() / 1000);
    const readsBefore = runReads(fake).length;
    await pollsFromNow(exporter, 3);
    expect(runReads(fake).length - readsBefore).toBeGreaterThanOrEqual(3);
    // Cancelled a minute after the start: 660 s after it was created; it tested #7.
    conclude(fake, { ...runA, status: 'cancelled', updatedAt: start + 60 });
    await pollsFromNow(exporter, 2);
    const afterA = await exporter.samples();
    expect(series(afterA, RUNS, 'status')).toEqual({ succeeded: 0, failed: 0, cancelled: 2 });
    expect(series(afterA, IN_PROGRESS, 'bisection')).toEqual({ false: 0, true: 0 });
    expect(series(afterA, DURATION + '_sum', 'status')).toEqual({ cancelled: 720 });
    expect(series(afterA, BATCH + '_count', 'bisection')).toEqual({ false: 2 });
    expect(series(afterA, BATCH + '_sum', 'bisection')).toEqual({ false: 1 });

    // Nothing in progress and nothing moving: no more reads.
    await pollsFromNow(exporter, 1);
    const quiet = runReads(fake).length;
    await pollsFromNow(exporter, 3);
    expect(runReads(fake).length).toBe(quiet);
  });
});

// A queue's verification runs through a real exporter holding an API key and polling a fake
// organization whose runs and entries the test moves by hand; every expected number is counted
// here from the scenario and Trunk's definition of `GET /v2/merge-queues/{id}/verification-runs`:
// "Lists the queue's verification runs, newest first", `createdAfter`: "Only runs created strictly
// after this instant"; a run's `requiredStatuses`: "A check in `checks` is required iff its `name`
// is in this list"; `updatedAt`: "For a finished run this approximates when it concluded";
// `testedPullRequests`: "More than one means the entries were batched".
import { afterEach, describe, expect, it, vi } from 'vitest';
import { select, sum } from './support/exposition.js';
import { anomalyLines } from './support/exporterHarness.js';
import { pageAt } from './support/fakeTrunkV2.js';
import { WEB_QUEUE, entryRow, moveEntry, startFakeWebQueue } from './support/queueEntryRows.js';
import {
  BATCH,
  CHECKS,
  DURATION,
  IN_PROGRESS,
  RUNS,
  conclude,
  runReads,
  series,
  webRunsExporter,
} from './support/verificationRunExporter.js';
import { checkRow, run } from './support/verificationRunRows.js';
import { WEB_MAIN as QUEUE } from './support/webQueueSamples.js';
import { cleanUp } from './trunk/harness.js';

afterEach(async () => {
  vi.useRealTimers();
  await cleanUp();
});

const now = () => Date.now() / 1000;

/**
 * The web queue with #7 testing on run `id`, in progress since `ago` seconds before the start, and
 * an exporter whose page shows the run in progress.
 */
async function testingOnRun(id: string, ago: number) {
  const start = Math.floor(now());
  const pr7 = entryRow(7, 'testing', start - ago);
  const fake = await startFakeWebQueue([pr7]);
  const shape = { id, createdAt: start - ago, tested: [7] };
  fake
    .verificationRuns(WEB_QUEUE)
    .push(run({ ...shape, status: 'inProgress', updatedAt: start - ago }));
  const exporter = await webRunsExporter(fake);
  await exporter.waitFor(
    (samples) => series(samples, IN_PROGRESS, 'bisection').false === 1,
    'the run in progress',
  );
  return { start, pr7, fake, shape, exporter };
}

describe('verification runs through a real exporter', () => {
  it('counts each concluded run once, its CI time, batch and failing required checks, and the runs in progress', async () => {
    const start = Math.floor(now());
    const pr7 = entryRow(7, 'testing', start - 900);
    const pr8 = entryRow(8, 'testing', start - 900);
    const fake = await startFakeWebQueue([pr7, pr8]);
    const runs = fake.verificationRuns(WEB_QUEUE);
    // Concluded before the exporter started: history, never counted.
    runs.push(
      run({
        id: 'run-old',
        status: 'succeeded',
        createdAt: start - 3000,
        updatedAt: start - 2400,
        tested: [5],
      }),
    );
    // Testing #7 and #8 together since 15 minutes before the start.
    const batch = { id: 'run-a', createdAt: start - 900, tested: [7, 8] };
    runs.push(run({ ...batch, status: 'inProgress', updatedAt: start - 900 }));
    const exporter = await webRunsExporter(fake);
    const first = await exporter.waitFor(
      (samples) => select(samples, IN_PROGRESS, QUEUE).length > 0,
      'the first read',
    );
    expect(series(first, IN_PROGRESS, 'bisection')).toEqual({ false: 1, true: 0 });
    // The web queue does not batch: the three documented concluded statuses, at 0.
    expect(series(first, RUNS, 'status,bisection')).toEqual({
      'succeeded/false': 0,
      'failed/false': 0,
      'cancelled/false': 0,
    });
    expect(select(first, DURATION + '_count', QUEUE)).toEqual([]);

    // Run A fails on e2e (listed twice: once per run) and unit (timeout), both required; lint
    // and preview fail too but are not required. #7 fails out, #8 goes back to pending; a
    // bisection run tests #8 alone; run C (#9) was cancelled and run D (#10-#12) ended in a status
    // the definition does not name, both between two polls.
    conclude(fake, { ...batch, status: 'failed', updatedAt: start + 300 });
    runs.push(
      run({
        id: 'run-b',
        status: 'inProgress',
        isBisection: true,
        createdAt: start + 10,
        updatedAt: start + 10,
        tested: [8],
      }),
      run({
        id: 'run-c',
        status: 'cancelled',
        createdAt: start + 20,
        updatedAt: start + 80,
        tested: [9],
        checks: [],
      }),
      run({
        id: 'run-d',
        status: 'abandonedByTrunk',
        createdAt: start + 30,
        updatedAt: start + 60,
        tested: [10, 11, 12],
      }),
    );
    moveEntry(pr7, 'failed', now());
    moveEntry(pr8, 'testing', now());
    const second = await exporter.waitFor(
      (samples) => series(samples, RUNS, 'status,bisection')['failed/false'] === 1,
      'run A counted',
    );
    expect(series(second, RUNS, 'status,bisection')).toEqual({
      'succeeded/false': 0,
      'failed/false': 1,
      'cancelled/false': 1,
      'unknown/false': 1,
    });
    expect(series(second, IN_PROGRESS, 'bisection')).toEqual({ false: 0, true: 1 });
    // updatedAt − createdAt: A 1,200 s, C 60 s, D 30 s.
    expect(series(second, DURATION + '_sum', 'status')).toEqual({
      failed: 1200,
      cancelled: 60,
      unknown: 30,
    });
    expect(series(second, DURATION + '_bucket', 'status,le')).toMatchObject({
      'failed/600': 0,
      'failed/1200': 1,
      'cancelled/60': 1,
      'unknown/60': 1,
    });
    // Tested PRs: A 2, C 1, D 3.
    expect(series(second, BATCH + '_count', 'bisection')).toEqual({ false: 3 });
    expect(series(second, BATCH + '_sum', 'bisection')).toEqual({ false: 6 });
    expect(series(second, BATCH + '_bucket', 'le')).toEqual({
      1: 1,
      2: 2,
      4: 3,
      8: 3,
      16: 3,
      32: 3,
      '+Inf': 3,
    });
    // Only failed runs count their checks, each required one once: D's checks are the
    // fixture's too, but D did not fail.
    expect(series(second, CHECKS, 'check')).toEqual({ e2e: 1, unit: 1 });

    // The bisection run passes and #8 leaves testing: the read reaches back to it, and nothing
    // read again counts twice.
    conclude(fake, {
      id: 'run-b',
      status: 'succeeded',
      isBisection: true,
      createdAt: start + 10,
      updatedAt: start + 610,
      tested: [8],
    });
    moveEntry(pr8, 'testsPassed', now());
    const third = await exporter.waitFor(
      (samples) => series(samples, RUNS, 'status,bisection')['succeeded/true'] === 1,
      'run B counted',
    );
    expect(series(third, RUNS, 'status,bisection')).toEqual({
      'succeeded/false': 0,
      'failed/false': 1,
      'cancelled/false': 1,
      'unknown/false': 1,
      'succeeded/true': 1,
    });
    expect(series(third, IN_PROGRESS, 'bisection')).toEqual({ false: 0, true: 0 });
    expect(series(third, DURATION + '_sum', 'status,bisection')).toMatchObject({
      'succeeded/true': 600,
    });
    expect(series(third, CHECKS, 'check')).toEqual({ e2e: 1, unit: 1 });
    // "strictly after": each read from before the run it must list again (A, then B).
    const reads = runReads(fake).map((at) => Date.parse(at) / 1000);
    expect(reads.length).toBe(3);
    expect(reads[1]).toBeLessThan(start - 900);
    expect(reads[2]).toBeLessThan(start + 10);
    expect(
      select(third, 'trunk_exporter_api_anomalies_total', {
        endpoint: 'v2/merge-queues/{id}/verification-runs',
        kind: 'unknown_value',
      })[0]?.value,
    ).toBeGreaterThanOrEqual(1);
  });

  it('cuts a check name too long for a label value, counts no failure for a conclusion the definition does not name, and reports both', async () => {
    // `CheckConclusion` is one of success, failure, neutral, cancelled, skipped, timeout: a failure
    // is "failure" or "timeout", so a conclusion Trunk adds is no failure, and an anomaly. A
    // check's name is the provider's; 300 characters would be carried by every page, so the label
    // keeps 199 and an ellipsis (the required list is cut alike, so the check stays required).
    const { start, pr7, fake, shape: batch, exporter } = await testingOnRun('run-a', 900);
    const long = `e2e-${'y'.repeat(296)}`;
    conclude(fake, {
      ...batch,
      status: 'failed',
      updatedAt: start + 60,
      requiredStatuses: [long, 'build'],
      checks: [checkRow(long, 'failure'), checkRow('build', 'erroredOnTheRunner')],
    });
    moveEntry(pr7, 'failed', now());
    const samples = await exporter.waitFor(
      (page) => series(page, RUNS, 'status,bisection')['failed/false'] === 1,
      'the run counted',
    );
    expect(series(samples, CHECKS, 'check')).toEqual({ [`e2e-${'y'.repeat(195)}…`]: 1 });
    for (const kind of ['invalid_field', 'unknown_value']) {
      expect(
        select(samples, 'trunk_exporter_api_anomalies_total', {
          endpoint: 'v2/merge-queues/{id}/verification-runs',
          kind,
        })[0]?.value,
      ).toBeGreaterThanOrEqual(1);
    }
  });

  it('counts a run updated a day ahead of its clock once, and logs it as it counts it', async () => {
    // Run A concludes with an updatedAt a day after the exporter's clock (Trunk's clock ahead, or
    // a bad row): a future_timestamp anomaly, named in a warn line as every odd answer is.
    const { start, pr7, fake, shape: batch, exporter } = await testingOnRun('run-a', 900);
    conclude(fake, { ...batch, status: 'succeeded', updatedAt: start + 86_400 });
    moveEntry(pr7, 'testsPassed', now());
    await exporter.waitFor(
      (page) =>
        (select(page, 'trunk_exporter_api_anomalies_total', {
          endpoint: 'v2/merge-queues/{id}/verification-runs',
          kind: 'future_timestamp',
        })[0]?.value ?? 0) >= 1,
      'the run from the future counted',
    );
    // Its endpoint is scrubbed from the line here: this file's API key holds "verification-runs".
    expect(await anomalyLines(exporter, 'future_timestamp')).toEqual([
      expect.objectContaining({ level: 40, ...QUEUE, count: 1 }),
    ]);
  });

  it('verification-runs-page-with-unusable-tested-pull-requests.json: counts a run with a tested pull request of no usable number, that PR in its batch; each such entry is one invalid_field and never an exemplar', async () => {
    // `TestedPullRequest`: "A pull request included in a verification run", its `number` an
    // "integer"; a pull request is submitted with a number of "exclusiveMinimum": 0. The fixture's
    // runs, each updated at its anchor: 61 succeeded, testing [61], 1,200 s; 62 failed on its
    // required check build, testing [0], 900 s; 63 succeeded, testing [-2, 62, 62.5], 600 s; 64
    // succeeded, testing [63, 64], 300 s; 65 cancelled, testing ["65", null, none, an entry that is
    // no object], 60 s. Entries without a usable number: 1 + 2 + 4 = 7.
    const start = Math.floor(now());
    const rows = [61, 62, 63, 64].map((number) => entryRow(number, 'testing', start - 1500));
    const fake = await startFakeWebQueue(rows);
    const exporter = await webRunsExporter(fake);
    // The first poll reads the runs (PRs are testing): none yet.
    await exporter.waitFor(
      (samples) => select(samples, IN_PROGRESS, QUEUE).length > 0,
      'the first read',
    );
    // Between two polls the runs conclude, dated on a whole second after that read, and the PRs
    // leave testing: the next poll reads the runs, and no poll after it does.
    const anchor = Math.ceil(now()) * 1000;
    const page = pageAt('verification-runs-page-with-unusable-tested-pull-requests.json', anchor);
    fake.verificationRuns(WEB_QUEUE).push(...(page.data as { createdAt: string }[]));
    for (const row of rows) moveEntry(row, 'testsPassed', now());
    const samples = await exporter.waitFor(
      (current) => sum(current, RUNS, QUEUE) > 0,
      'the runs counted',
    );
    expect(fake.requestsTo(/verification-runs$/)).toHaveLength(2);
    expect(series(samples, RUNS, 'status,bisection')).toEqual({
      'succeeded/false': 3,
      'failed/false': 1,
      'cancelled/false': 1,
    });
    expect(series(samples, DURATION + '_sum', 'status')).toEqual({
      succeeded: 2100,
      failed: 900,
      cancelled: 60,
    });
    // Tested PRs: 1, 1, 3, 2 and 4, a PR listed without a usable number one of them.
    expect(series(samples, BATCH + '_count', 'bisection')).toEqual({ false: 5 });
    expect(series(samples, BATCH + '_sum', 'bisection')).toEqual({ false: 11 });
    expect(series(samples, BATCH + '_bucket', 'le')).toEqual({
      1: 2,
      2: 3,
      4: 5,
      8: 5,
      16: 5,
      32: 5,
      '+Inf': 5,
    });
    expect(series(samples, CHECKS, 'check')).toEqual({ build: 1 });
    const anomalies = (kind: string) =>
      select(samples, 'trunk_exporter_api_anomalies_total', {
        endpoint: 'v2/merge-queues/{id}/verification-runs',
        kind,
      })[0]?.value;
    expect(anomalies('invalid_field')).toBe(7);
    expect(anomalies('invalid_item')).toBe(0);
    // Each run's exemplar is its first tested PR of a usable number: 61, 62 (after -2) and 63;
    // runs 62 and 65 have none to name.
    const openMetrics = await exporter.scrape('/metrics', {
      Accept: 'application/openmetrics-text; version=1.0.0',
    });
    const exemplars = openMetrics
      .split('\n')
      .flatMap(
        (line) =>
          /^trunk_merge_queue_verification_run_duration_seconds_bucket\{.*status="(\w+)".*le="([^"]+)"\} \S+ # \{pr="([^"]*)"\}/
            .exec(line)
            ?.slice(1)
            .join(' ') ?? [],
      );
    expect(exemplars).toEqual(['succeeded 300.0 63', 'succeeded 600.0 62', 'succeeded 1200.0 61']);
  });

  it('reads again at each poll while its read fails, hides only its families after staleAfterSeconds, and shows its counts again once a read succeeds', async () => {
    const start = Math.floor(now());
    const pr7 = entryRow(7, 'testing', start - 600);
    const fake = await startFakeWebQueue([pr7]);
    fake.verificationRuns(WEB_QUEUE).push(
      run({
        id: 'run-a',
        status: 'inProgress',
        createdAt: start - 600,
        updatedAt: start - 600,
        tested: [7],
      }),
    );
    const exporter = await webRunsExporter(fake);
    await exporter.waitFor((samples) => select(samples, IN_PROGRESS, QUEUE).length > 0, 'read');
    fake.fail(/verification-runs$/, 500);
    conclude(fake, {
      id: 'run-a',
      status: 'succeeded',
      createdAt: start - 600,
      updatedAt: start,
      tested: [7],
    });
    moveEntry(pr7, 'testsPassed', now());
    const failingFrom = fake.requestsTo(/verification-runs$/).length;
    const polls = () => fake.requestsTo(/pull-requests$/).length;
    const pollsFrom = polls();
    const hidden = await exporter.waitFor(
      (samples) => select(samples, RUNS, QUEUE).length === 0,
      'the run families hidden',
    );
    // Its own families only: the queue is up and its other families are fresh.
    expect(
      select(hidden, 'trunk_exporter_target_up', { ...QUEUE, kind: 'merge_queue' })[0]?.value,
    ).toBe(1);
    expect(select(hidden, 'trunk_merge_queue_pull_requests', QUEUE).length).toBeGreaterThan(0);
    for (const name of [IN_PROGRESS, DURATION + '_count', BATCH + '_count', CHECKS]) {
      expect(select(hidden, name, QUEUE)).toEqual([]);
    }
    // One read per poll (each made once: the client's retries aside).
    const failedReads = fake.requestsTo(/verification-runs$/).length - failingFrom;
    expect(failedReads).toBeGreaterThan(0);
    expect(failedReads).toBeLessThanOrEqual((polls() - pollsFrom + 1) * 3);
    fake.recover();
    const back = await exporter.waitFor(
      (samples) => series(samples, RUNS, 'status,bisection')['succeeded/false'] === 1,
      'the run counted once the read succeeds',
    );
    expect(series(back, IN_PROGRESS, 'bisection')).toEqual({ false: 0, true: 0 });
  });

  // `GET /v2/merge-queue-verification-runs/{id}`: "Returns one merge-queue verification run"
  // (a `VerificationRun`), 404 `VERIFICATION_RUN_NOT_FOUND`. The clock (Date alone) is moved two
  // days on while the run is in progress: past the day a read of the list reaches back.
  const BY_ID = /^\/v2\/merge-queue-verification-runs\/[^/]+$/;
  const TWO_DAYS = 2 * 86_400;
  const PULL_REQUESTS = 'trunk_merge_queue_pull_requests';

  /**
   * The web queue with #7 testing on run `stuck` since the start, read once in progress; then the
   * clock two days on and #8 entering testing (a read due): the run was created two days ago and
   * is still in progress, #7 still testing on it.
   */
  async function runStuckForTwoDays() {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { start, pr7, fake, shape: stuck, exporter } = await testingOnRun('run-stuck', 60);
    vi.setSystemTime((start + TWO_DAYS) * 1000);
    fake.entries(WEB_QUEUE).push(entryRow(8, 'testing', now()));
    // The poll that sees #8 enter testing reads the runs: its page shows that read.
    const later = await exporter.waitFor(
      (samples) => select(samples, PULL_REQUESTS, { ...QUEUE, state: 'testing' })[0]?.value === 2,
      '#8 testing, two days on',
    );
    return { start, pr7, fake, stuck, exporter, later };
  }

  it('keeps a run in progress for two days in the gauge, read by id, and counts it once when it concludes', async () => {
    const { start, pr7, fake, stuck, exporter, later } = await runStuckForTwoDays();
    expect(series(later, IN_PROGRESS, 'bisection')).toEqual({ false: 1, true: 0 });
    // No call by id before the run fell past the day.
    expect(fake.requestsTo(BY_ID)).toEqual([]);

    // It fails on e2e, required; #7 fails out.
    conclude(fake, {
      ...stuck,
      status: 'failed',
      updatedAt: start + TWO_DAYS + 5,
      requiredStatuses: ['e2e', 'build'],
      checks: [checkRow('e2e', 'failure'), checkRow('build', 'success')],
    });
    moveEntry(pr7, 'failed', now());
    const concluded = await exporter.waitFor(
      (samples) => series(samples, RUNS, 'status,bisection')['failed/false'] === 1,
      'the stuck run counted',
    );
    expect(series(concluded, CHECKS, 'check')).toEqual({ e2e: 1 });
    expect(series(concluded, IN_PROGRESS, 'bisection')).toEqual({ false: 0, true: 0 });
    expect(series(concluded, DURATION + '_sum', 'status')).toMatchObject({
      failed: TWO_DAYS + 65,
    });
    expect(fake.requestsTo(BY_ID).map((request) => request.url)).toEqual([
      '/v2/merge-queue-verification-runs/run-stuck',
    ]);
    // Once: #8 leaving testing reads again, and the run is neither asked for nor counted again.
    const pr8 = fake.entries(WEB_QUEUE).find((row) => row.number === 8);
    if (pr8 !== undefined) moveEntry(pr8, 'testsPassed', now());
    const after = await exporter.waitFor(
      (samples) =>
        select(samples, PULL_REQUESTS, { ...QUEUE, state: 'tests_passed' })[0]?.value === 1,
      '#8 passed',
    );
    expect(series(after, RUNS, 'status,bisection')['failed/false']).toBe(1);
    expect(series(after, CHECKS, 'check')).toEqual({ e2e: 1 });
    expect(fake.requestsTo(BY_ID)).toHaveLength(1);
  });

  it('keeps a run followed by id while its read fails, and drops it once it answers 404', async () => {
    const { fake, exporter } = await runStuckForTwoDays();
    // A read is due at each poll while no PR testing vouches for the run: #7 goes back to pending.
    fake.fail(BY_ID, 500);
    const pr7 = fake.entries(WEB_QUEUE).find((row) => row.number === 7);
    if (pr7 !== undefined) moveEntry(pr7, 'pending', now());
    await exporter.waitFor(() => fake.requestsTo(BY_ID).length >= 2, 'two failed reads by id');
    const failing = await exporter.waitFor(
      (samples) => select(samples, PULL_REQUESTS, { ...QUEUE, state: 'pending' })[0]?.value === 1,
      '#7 pending',
    );
    expect(series(failing, IN_PROGRESS, 'bisection')).toEqual({ false: 1, true: 0 });
    expect(
      select(failing, 'trunk_exporter_target_up', { ...QUEUE, kind: 'merge_queue' })[0]?.value,
    ).toBe(1);
    // Trunk no longer has the run: 404, and it is no longer followed.
    fake.recover();
    fake.verificationRuns(WEB_QUEUE).splice(0);
    const gone = await exporter.waitFor(
      (samples) => series(samples, IN_PROGRESS, 'bisection').false === 0,
      'the run dropped',
    );
    expect(series(gone, RUNS, 'status,bisection')['failed/false']).toBe(0);
    const asked = fake.requestsTo(BY_ID).length;
    const polls = fake.requestsTo(/pull-requests$/).length;
    await exporter.waitFor(
      () => fake.requestsTo(/pull-requests$/).length >= polls + 5,
      'five polls more',
    );
    expect(fake.requestsTo(BY_ID)).toHaveLength(asked);
  });

  it('with reads.verificationRuns: false makes no such call and has no such series', async () => {
    const start = Math.floor(now());
    const pr7 = entryRow(7, 'testing', start - 600);
    const fake = await startFakeWebQueue([pr7]);
    const exporter = await webRunsExporter(fake, '\nreads:\n  verificationRuns: false');
    await exporter.waitFor(
      (samples) => select(samples, 'trunk_merge_queue_pull_requests', QUEUE).length > 0,
      'a poll',
    );
    moveEntry(pr7, 'testsPassed', now());
    const samples = await exporter.waitFor(
      (current) =>
        select(current, 'trunk_merge_queue_pull_requests', {
          ...QUEUE,
          state: 'tests_passed',
        }).some((sample) => sample.value === 1),
      '#7 passed',
    );
    expect(fake.requestsTo(/verification-runs$/)).toEqual([]);
    expect(
      samples.filter((sample) => sample.name.startsWith('trunk_merge_queue_verification')),
    ).toEqual([]);
  });
});

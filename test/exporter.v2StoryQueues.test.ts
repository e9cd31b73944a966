// Two queues that do not batch, and two more stories of one, through API v2 and a real exporter,
// every number counted by hand as in exporter.v2Story.test.ts (whose header quotes the words of
// Trunk's definition the counts rest on): a retest after a pending failure, a restart from
// testsPassed, a pull request closed while it tests, one that enters and fails between two polls,
// a cancellation with no reason resubmitted between two polls, an attempt without an outcome, an
// entry at priority 0 with no name, readiness that fails two rules, a mergeability code and queue
// states the definition does not name, a failure and resubmission that only the periodic read of
// concluded entries finds. Trunk's words beyond those: `outcome` `cancelled` is "the pull request
// left the queue while testing"; `mergeabilityDetails` "Absence never means the pull request is
// mergeable"; `priorityName` "Either may still be absent on its own — do not infer one from the
// presence of the other"; a queue entry's `id`: "an ordinary resubmission after a cancellation
// reuses it".
import { afterEach, describe, expect, it, vi } from 'vitest';
import { pageAt, startFakeV2, type EntryRow } from './support/fakeTrunkV2.js';
import { WEB_QUEUE, resubmitEntry } from './support/queueEntryRows.js';
import { checkRow } from './support/verificationRunRows.js';
import {
  API_MAIN,
  API_QUEUE,
  BATCH,
  CANCELLED,
  CHECKS,
  DURATION,
  FAILED,
  IN_PROGRESS,
  IN_QUEUE,
  IN_STATE,
  NO_MERGEABILITY_REASON,
  RUNS,
  T,
  TESTING,
  TRANSITIONS,
  empty,
  expectExits,
  histogram,
  move,
  prRow,
  result,
  runRow,
  series,
  setRun,
  step,
  storyExporter,
} from './support/v2Story.js';
import { cleanUp } from './trunk/harness.js';

afterEach(async () => {
  vi.useRealTimers();
  await cleanUp();
});

describe('queues that do not batch through API v2 and a real exporter, every number by hand', () => {
  it('counts two queues that do not batch apart: a retest after a pending failure, a restart from testsPassed, a PR closed while testing, one failed between polls', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: T * 1000 });
    const webRows: EntryRow[] = [];
    const apiRows: EntryRow[] = [];
    // github.com/acme/web main and github.com/acme/api main: neither batches
    // (`allowBatching: false`), both require ci/build.
    const fake = await startFakeV2({
      queues: pageAt('merge-queues-of-an-organization.json'),
      entries: { [WEB_QUEUE]: webRows, [API_QUEUE]: apiRows },
    });
    const webResults = fake.testingResults(WEB_QUEUE) as unknown[];
    const apiResults = fake.testingResults(API_QUEUE) as unknown[];

    // Web before poll 0: #201 and #202 (behind it) testing since −300 on s1 and s2; #203 not
    // ready since −200, retargeted to another branch and not mergeable (no reasons recorded);
    // #204 pending since −100, no priority name, not mergeable for a review and a code the
    // definition does not list.
    const pr201 = prRow(201, 'testing', -300, -400);
    const pr202 = prRow(202, 'testing', -300, -400);
    const pr203 = prRow(203, 'notReady', -200, -200);
    Object.assign(pr203.queueEntry, {
      readiness: {
        requiresImpactedTargets: false,
        doesBaseBranchMatch: false,
        mergeability: 'notMergeable',
      },
    });
    const pr204 = prRow(204, 'pending', -100, -150);
    const entry204 = pr204.queueEntry as Record<string, unknown>;
    delete entry204.priorityName;
    delete entry204.priorityValue;
    entry204.readiness = {
      requiresImpactedTargets: false,
      doesBaseBranchMatch: true,
      mergeability: 'notMergeable',
      mergeabilityDetails: {
        provider: 'github',
        reasons: [
          { code: 'reviewRequired', message: 'needs 1 more approving review', have: 0, need: 1 },
          { code: 'mergeQueueLocked', message: 'the branch is locked' },
        ],
      },
    };
    webRows.push(pr204, pr203, pr202, pr201);
    for (const number of [201, 202]) {
      step(fake, number, 'notReady', -400, 'USER_REQUESTED');
      step(fake, number, 'pending', -350, 'MERGE_ITEM_NOW_READY');
      step(fake, number, 'testing', -300, null);
    }
    step(fake, 203, 'notReady', -200, 'USER_REQUESTED');
    step(fake, 204, 'notReady', -150, 'USER_REQUESTED');
    step(fake, 204, 'pending', -100, 'MERGE_ITEM_NOW_READY');
    setRun(fake, WEB_QUEUE, runRow('s1', 'inProgress', -300, -300, [201]));
    setRun(fake, WEB_QUEUE, runRow('s2', 'inProgress', -300, -300, [202]));
    // Api before poll 0: #301 testing since −200 on a1.
    const pr301 = prRow(301, 'testing', -200, -260);
    apiRows.push(pr301);
    step(fake, 301, 'notReady', -260, 'USER_REQUESTED');
    step(fake, 301, 'pending', -230, 'MERGE_ITEM_NOW_READY');
    step(fake, 301, 'testing', -200, null);
    setRun(fake, API_QUEUE, runRow('a1', 'inProgress', -200, -200, [301]));

    const { exporter, pollsAt } = await storyExporter(
      fake,
      [
        '  - repo: github.com/acme/web',
        '    branches: [main]',
        '  - repo: github.com/acme/api',
        '    branches: [main]',
      ].join('\n'),
      [WEB_QUEUE, API_QUEUE],
    );
    await pollsAt(0);
    const atPoll0 = await exporter.samples();

    // Between polls 0 and 1, web: s2 fails #202 at 100 while #201 ahead still tests: #202 waits
    // in pendingFailure. s1 fails #201 at 150 (ci/build; ci/e2e, required too, was cancelled):
    // #202 is retested, back in line at 150, testing on s3 from 170.
    setRun(
      fake,
      WEB_QUEUE,
      runRow('s1', 'failed', -300, 150, [201], {
        requiredStatuses: ['ci/build', 'ci/e2e'],
        checks: [checkRow('ci/build', 'failure'), checkRow('ci/e2e', 'cancelled')],
      }),
    );
    setRun(
      fake,
      WEB_QUEUE,
      runRow('s2', 'failed', -300, 100, [202], {
        checks: [
          { ...checkRow('ci/build', 'failure'), id: 'check-ci/build-1' },
          { ...checkRow('ci/build', 'failure'), id: 'check-ci/build-2' },
        ],
      }),
    );
    setRun(fake, WEB_QUEUE, runRow('s3', 'inProgress', 170, 170, [202]));
    step(fake, 202, 'pendingFailure', 100, null);
    webResults.push(result(202, 's2', -300, 100, 'failed'));
    step(fake, 201, 'failed', 150, 'TEST_RUN_REQUIRED_STATUS_FAILED');
    webResults.push(result(201, 's1', -300, 150, 'failed', { entryConclusion: 'failed' }));
    move(pr201, 'failed', 150);
    step(fake, 202, 'pending', 150, 'PREREQUISITE_MERGE_ITEM_FAILED');
    step(fake, 202, 'testing', 170, null);
    move(pr202, 'testing', 170);
    // Api: a1 passes at 100, #301 merges at 110; #302 is submitted at 150, ready at 160 and tests
    // on a2 from 170.
    setRun(fake, API_QUEUE, runRow('a1', 'succeeded', -200, 100, [301]));
    step(fake, 301, 'testsPassed', 100, 'TEST_RUN_PASSED');
    step(fake, 301, 'merged', 110, 'MERGE_GRAPH_MERGE');
    apiResults.push(result(301, 'a1', -200, 100, 'passed', { entryConclusion: 'merged' }));
    move(pr301, 'merged', 110);
    const pr302 = prRow(302, 'testing', 170, 150);
    apiRows.unshift(pr302);
    step(fake, 302, 'notReady', 150, 'USER_REQUESTED');
    step(fake, 302, 'pending', 160, 'MERGE_ITEM_NOW_READY');
    step(fake, 302, 'testing', 170, null);
    setRun(fake, API_QUEUE, runRow('a2', 'inProgress', 170, 170, [302]));
    await pollsAt(300);

    // Between polls 1 and 2, web: s3 passes #202 at 400 (it waits in testsPassed); #204 tests on
    // s4 from 350. Api: a2 times out on ci/build at 400 and #302 fails.
    setRun(fake, WEB_QUEUE, runRow('s3', 'succeeded', 170, 400, [202]));
    step(fake, 202, 'testsPassed', 400, 'TEST_RUN_PASSED');
    webResults.push(result(202, 's3', 170, 400, 'passed'));
    move(pr202, 'testsPassed', 400);
    setRun(fake, WEB_QUEUE, runRow('s4', 'inProgress', 350, 350, [204]));
    step(fake, 204, 'testing', 350, null);
    move(pr204, 'testing', 350);
    setRun(
      fake,
      API_QUEUE,
      runRow('a2', 'failed', 170, 400, [302], { checks: [checkRow('ci/build', 'timeout')] }),
    );
    step(fake, 302, 'failed', 400, 'TEST_RUN_TIMEOUT');
    apiResults.push(result(302, 'a2', 170, 400, 'failed', { entryConclusion: 'failed' }));
    move(pr302, 'failed', 400);
    await pollsAt(600);
    const atPoll2 = await exporter.samples();

    // Between polls 2 and 3, web: a push to main at 650 sends #202 (testsPassed) and #204
    // (testing, s4 cancelled) back in line; both test again from 700, on s5 and s6. #204's PR is
    // closed at 800 while it tests (s6 cancelled). #205 is submitted at 820, ready at 825 and
    // fails at 830 as its branch conflicts: no poll lists it.
    step(fake, 202, 'pending', 650, 'MANUAL_PUSH_TO_TARGET_BRANCH');
    step(fake, 204, 'pending', 650, 'MANUAL_PUSH_TO_TARGET_BRANCH');
    setRun(fake, WEB_QUEUE, runRow('s4', 'cancelled', 350, 650, [204]));
    webResults.push(result(204, 's4', 350, 650, 'interrupted'));
    for (const number of [202, 204]) step(fake, number, 'testing', 700, null);
    setRun(fake, WEB_QUEUE, runRow('s5', 'inProgress', 700, 700, [202]));
    move(pr202, 'testing', 700);
    step(fake, 204, 'cancelled', 800, 'PR_CLOSED');
    // ci/build had already failed on s6 when it was cancelled: no failed run for it to count.
    setRun(
      fake,
      WEB_QUEUE,
      runRow('s6', 'cancelled', 700, 800, [204], { checks: [checkRow('ci/build', 'failure')] }),
    );
    webResults.push(result(204, 's6', 700, 800, 'cancelled', { entryConclusion: 'cancelled' }));
    move(pr204, 'cancelled', 800);
    const pr205 = prRow(205, 'failed', 830, 820);
    webRows.unshift(pr205);
    step(fake, 205, 'notReady', 820, 'USER_REQUESTED');
    step(fake, 205, 'pending', 825, 'MERGE_ITEM_NOW_READY');
    step(fake, 205, 'failed', 830, 'START_TEST_RUN_MERGE_CONFLICT');
    await pollsAt(900);

    // Between polls 3 and 4, web: s5 passes #202 at 1000, merged at 1005; #203 is removed at
    // 1100 as its base branch changed.
    // ci/build failed once on s5 and passed when re-run ("Every check the run observed"): the
    // run succeeded, which fails no check.
    setRun(
      fake,
      WEB_QUEUE,
      runRow('s5', 'succeeded', 700, 1000, [202], {
        checks: [
          { ...checkRow('ci/build', 'failure'), id: 'check-ci/build-first' },
          { ...checkRow('ci/build', 'success'), id: 'check-ci/build-rerun' },
        ],
      }),
    );
    step(fake, 202, 'testsPassed', 1000, 'TEST_RUN_PASSED');
    step(fake, 202, 'merged', 1005, 'MERGE_GRAPH_MERGE');
    webResults.push(result(202, 's5', 700, 1000, 'passed', { entryConclusion: 'merged' }));
    move(pr202, 'merged', 1005);
    step(fake, 203, 'cancelled', 1100, 'PR_BASE_BRANCH_CHANGED');
    move(pr203, 'cancelled', 1100);
    await pollsAt(1200);
    await pollsAt(1500);
    await pollsAt(1800);
    const atEnd = await exporter.samples();

    const noRuns = { 'succeeded/false': 0, 'failed/false': 0, 'cancelled/false': 0 };
    // Poll 0. Web: #204 has no priorityName ("Either may still be absent on its own"): unknown.
    expect(series(atPoll0, 'trunk_merge_queue_pull_requests', ['state', 'priority'])).toEqual({
      'not_ready/medium': 1,
      'pending/medium': 0,
      'pending/unknown': 1,
      'testing/medium': 2,
      'tests_passed/medium': 0,
      'pending_failure/medium': 0,
    });
    expect(
      series(atPoll0, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', ['state']),
    ).toEqual({ not_ready: T - 200, pending: T - 100, testing: T - 300 });
    expect(series(atPoll0, 'trunk_merge_queue_oldest_pull_request_number', ['state'])).toEqual({
      not_ready: 203,
      pending: 204,
      testing: 201,
    });
    // #203 fails two readiness rules: it counts under both. #204 is pending: no readiness rule.
    expect(series(atPoll0, 'trunk_merge_queue_pull_requests_blocked', ['reason'])).toEqual({
      base_branch_mismatch: 1,
      not_mergeable: 1,
    });
    // #204's two reasons; #203 has none recorded ("Absence never means the pull request is
    // mergeable"): no reason to count. A code Trunk adds is its own series, in snake_case.
    expect(series(atPoll0, 'trunk_merge_queue_pull_requests_not_mergeable', ['reason'])).toEqual({
      ...NO_MERGEABILITY_REASON,
      review_required: 1,
      merge_queue_locked: 1,
    });
    expect(series(atPoll0, IN_PROGRESS, ['bisection'])).toEqual({ false: 2, true: 0 });
    // Neither queue batches: no bisection run or step series at 0.
    expect(series(atPoll0, RUNS, ['status', 'bisection'])).toEqual(noRuns);
    expect(histogram(atPoll0, TESTING, ['outcome', 'bisection'])).toEqual({
      'passed/false': empty(8),
      'failed/false': empty(8),
      'interrupted/false': empty(8),
      'cancelled/false': empty(8),
    });
    expect(
      series(atPoll0, 'trunk_merge_queue_pull_requests', ['state', 'priority'], API_MAIN),
    ).toEqual({
      'not_ready/medium': 0,
      'pending/medium': 0,
      'testing/medium': 1,
      'tests_passed/medium': 0,
      'pending_failure/medium': 0,
    });
    expect(series(atPoll0, IN_PROGRESS, ['bisection'], API_MAIN)).toEqual({ false: 1, true: 0 });

    // Poll 2, web: #202 testsPassed since 400, #204 testing since 350, #203 not ready.
    expect(series(atPoll2, 'trunk_merge_queue_pull_requests', ['state', 'priority'])).toEqual({
      'not_ready/medium': 1,
      'pending/medium': 0,
      'testing/medium': 0,
      'testing/unknown': 1,
      'tests_passed/medium': 1,
      'pending_failure/medium': 0,
    });
    expect(
      series(atPoll2, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', ['state']),
    ).toEqual({ not_ready: T - 200, testing: T + 350, tests_passed: T + 400 });
    expect(series(atPoll2, 'trunk_merge_queue_oldest_pull_request_number', ['state'])).toEqual({
      not_ready: 203,
      testing: 204,
      tests_passed: 202,
    });
    expect(series(atPoll2, IN_PROGRESS, ['bisection'])).toEqual({ false: 1, true: 0 }); // s4
    // s1, s2 failed; s3 succeeded.
    expect(series(atPoll2, RUNS, ['status', 'bisection'])).toEqual({
      'succeeded/false': 1,
      'failed/false': 2,
      'cancelled/false': 0,
    });

    // The end, web. Exits: #201 failed 150, #205 failed 830 (between polls), #204 cancelled 800,
    // #203 cancelled 1100, #202 merged 1005.
    expectExits(atEnd, { merged: 1, failed: 2, cancelled: 2 });
    expect(series(atEnd, FAILED, ['reason'])).toEqual({
      TEST_RUN_REQUIRED_STATUS_FAILED: 1, // #201
      START_TEST_RUN_MERGE_CONFLICT: 1, // #205
    });
    expect(series(atEnd, CANCELLED, ['reason'])).toEqual({
      PR_CLOSED: 1, // #204
      PR_BASE_BRANCH_CHANGED: 1, // #203
    });
    // Into pending from pendingFailure (#202 at 150), testsPassed (#202 at 650) and testing (#204
    // at 650).
    expect(series(atEnd, 'trunk_merge_queue_restarts_total', ['cause'])).toEqual({
      PREREQUISITE_MERGE_ITEM_FAILED: 1,
      MANUAL_PUSH_TO_TARGET_BRANCH: 2,
    });
    //   #201 testing→failed 150
    //   #202 testing→pendingFailure 100, pendingFailure→pending 150, pending→testing 170, 700,
    //        testing→testsPassed 400, 1000, testsPassed→pending 650, testsPassed→merged 1005
    //   #203 notReady→cancelled 1100
    //   #204 pending→testing 350, 700, testing→pending 650, testing→cancelled 800
    //   #205 notReady→pending 825, pending→failed 830
    expect(series(atEnd, TRANSITIONS, ['from', 'to'])).toEqual({
      'testing/failed': 1,
      'testing/pending_failure': 1,
      'pending_failure/pending': 1,
      'pending/testing': 4, // 2 + 2
      'testing/tests_passed': 2,
      'tests_passed/pending': 1,
      'tests_passed/merged': 1,
      'not_ready/cancelled': 1,
      'testing/pending': 1,
      'testing/cancelled': 1,
      'not_ready/pending': 1,
      'pending/failed': 1,
    });
    //   merged: #202 1005 − (−300) = 1305
    //   failed: #201 150 − (−300) = 450; #205 830 − 820 = 10
    //   cancelled: #204 800 − (−100) = 900; #203 1100 − (−200) = 1300
    expect(histogram(atEnd, IN_QUEUE, ['outcome'])).toEqual({
      merged: { buckets: [0, 0, 0, 1, 1, 1, 1, 1, 1], sum: 1305, count: 1 },
      failed: { buckets: [1, 2, 2, 2, 2, 2, 2, 2, 2], sum: 460, count: 2 },
      cancelled: { buckets: [0, 0, 1, 2, 2, 2, 2, 2, 2], sum: 2200, count: 2 },
    });
    // On the transitions the polls saw:
    //   testing: #201 −300 → 150 = 450; #202 170 → 400 = 230; #204 350 → 800 = 450 (the polls
    //            listed it testing since 350; its return to testing at 700 no poll listed);
    //            #202 700 → 1005 = 305
    //   pending: #204 −100 → 350 = 450; tests_passed: #202 400 → 700 = 300
    //   not_ready: #203 −200 → 1100 = 1300
    expect(histogram(atEnd, IN_STATE, ['state'])).toEqual({
      testing: { buckets: [1, 4, 4, 4, 4, 4, 4, 4, 4], sum: 1435, count: 4 },
      pending: { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 450, count: 1 },
      tests_passed: { buckets: [1, 1, 1, 1, 1, 1, 1, 1, 1], sum: 300, count: 1 },
      not_ready: { buckets: [0, 0, 0, 1, 1, 1, 1, 1, 1], sum: 1300, count: 1 },
    });
    expect(series(atEnd, 'trunk_merge_queue_state_seconds_total', ['state'])).toEqual({
      running: 1800, // 6 × 300
      paused: 0,
      draining: 0,
      switching_modes: 0,
    });
    //   passed: #202 s3 230, s5 300; failed: #202 s2 400, #201 s1 450; interrupted: #204 s4 300;
    //   cancelled ("the pull request left the queue while testing"): #204 s6 100
    expect(histogram(atEnd, TESTING, ['outcome', 'bisection'])).toEqual({
      'passed/false': { buckets: [0, 2, 2, 2, 2, 2, 2, 2, 2], sum: 530, count: 2 },
      'failed/false': { buckets: [0, 0, 2, 2, 2, 2, 2, 2, 2], sum: 850, count: 2 },
      'interrupted/false': { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 300, count: 1 },
      'cancelled/false': { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 100, count: 1 },
    });
    expect(series(atEnd, 'trunk_merge_queue_bisections_started_total', [])).toEqual({ '': 0 });
    expect(series(atEnd, RUNS, ['status', 'bisection'])).toEqual({
      'succeeded/false': 2, // s3, s5
      'failed/false': 2, // s1, s2
      'cancelled/false': 2, // s4, s6
    });
    expect(series(atEnd, IN_PROGRESS, ['bisection'])).toEqual({ false: 0, true: 0 });
    // s1 450, s2 400; s3 230, s5 300; s4 300, s6 100.
    expect(histogram(atEnd, DURATION, ['status', 'bisection'])).toEqual({
      'failed/false': { buckets: [0, 0, 2, 2, 2, 2, 2, 2, 2], sum: 850, count: 2 },
      'succeeded/false': { buckets: [0, 2, 2, 2, 2, 2, 2, 2, 2], sum: 530, count: 2 },
      'cancelled/false': { buckets: [0, 2, 2, 2, 2, 2, 2, 2, 2], sum: 400, count: 2 },
    });
    expect(histogram(atEnd, BATCH, ['bisection'])).toEqual({
      false: { buckets: [6, 6, 6, 6, 6, 6, 6], sum: 6, count: 6 },
    });
    // s1: ci/build failed (required ci/e2e was cancelled: no failure); s2: ci/build failed twice,
    // once per run. Not s5 (succeeded) nor s6 (cancelled), though ci/build failed on each.
    expect(series(atEnd, CHECKS, ['check'])).toEqual({ 'ci/build': 2 });
    expect(series(atEnd, 'trunk_merge_queue_last_merge_timestamp_seconds', [])).toEqual({
      '': T + 1005,
    });
    expect(series(atEnd, 'trunk_merge_queue_repeated_failures_total', [])).toEqual({ '': 0 });
    expect(series(atEnd, 'trunk_merge_queue_pull_requests_blocked', ['reason'])).toEqual({
      base_branch_mismatch: 0,
      not_mergeable: 0,
    });
    expect(series(atEnd, 'trunk_merge_queue_pull_requests_not_mergeable', ['reason'])).toEqual(
      NO_MERGEABILITY_REASON,
    );

    // The end, api: #301 merged at 110; #302 (first listed by poll 1, testing since 170) failed
    // at 400.
    const api = (name: string, labels: readonly string[]) => series(atEnd, name, labels, API_MAIN);
    expectExits(atEnd, { merged: 1, failed: 1 }, API_MAIN);
    expect(api(FAILED, ['reason'])).toEqual({ TEST_RUN_TIMEOUT: 1 });
    expect(api(CANCELLED, ['reason'])).toEqual({});
    expect(api('trunk_merge_queue_restarts_total', ['cause'])).toEqual({});
    expect(api(TRANSITIONS, ['from', 'to'])).toEqual({
      'testing/tests_passed': 1, // #301
      'tests_passed/merged': 1, // #301
      'not_ready/pending': 1, // #302
      'pending/testing': 1, // #302
      'testing/failed': 1, // #302
    });
    // #301 110 − (−200) = 310; #302 400 − 170 = 230.
    expect(histogram(atEnd, IN_QUEUE, ['outcome'], API_MAIN)).toEqual({
      merged: { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 310, count: 1 },
      failed: { buckets: [1, 1, 1, 1, 1, 1, 1, 1, 1], sum: 230, count: 1 },
      cancelled: empty(8),
    });
    expect(histogram(atEnd, IN_STATE, ['state'], API_MAIN)).toEqual({
      testing: { buckets: [1, 2, 2, 2, 2, 2, 2, 2, 2], sum: 540, count: 2 }, // 310 + 230
    });
    expect(histogram(atEnd, TESTING, ['outcome', 'bisection'], API_MAIN)).toEqual({
      'passed/false': { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 300, count: 1 }, // a1
      'failed/false': { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 230, count: 1 }, // a2
      'interrupted/false': empty(8),
      'cancelled/false': empty(8),
    });
    expect(api(RUNS, ['status', 'bisection'])).toEqual({
      'succeeded/false': 1,
      'failed/false': 1,
      'cancelled/false': 0,
    });
    expect(histogram(atEnd, DURATION, ['status', 'bisection'], API_MAIN)).toEqual({
      'succeeded/false': { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 300, count: 1 },
      'failed/false': { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 230, count: 1 },
    });
    expect(histogram(atEnd, BATCH, ['bisection'], API_MAIN)).toEqual({
      false: { buckets: [2, 2, 2, 2, 2, 2, 2], sum: 2, count: 2 },
    });
    expect(api(CHECKS, ['check'])).toEqual({ 'ci/build': 1 }); // a2 timed out on it
    expect(api('trunk_merge_queue_last_merge_timestamp_seconds', [])).toEqual({ '': T + 110 });
    expect(api('trunk_merge_queue_state_seconds_total', ['state'])).toEqual({
      running: 1800,
      paused: 0,
      draining: 0,
      switching_modes: 0,
    });
  }, 60_000);

  it('counts a failure after a pending failure, a cancellation with no reason resubmitted between two polls, an attempt without an outcome and queue states Trunk adds', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: T * 1000 });
    const queues = pageAt('merge-queues-of-an-organization.json');
    const queueRow = queues.data[0] as { state: string };
    const rows: EntryRow[] = [];
    const fake = await startFakeV2({ queues, entries: { [WEB_QUEUE]: rows } });
    const results = fake.testingResults(WEB_QUEUE) as unknown[];
    const setWebRun = (row: Record<string, unknown>) => {
      setRun(fake, WEB_QUEUE, row);
    };

    // Before poll 0: #401 and #402 (behind it) testing since −100 on u1 and u2; #403 pending since
    // −50 at priority 0 with no name ("some entries carry a value the queue never named").
    const pr401 = prRow(401, 'testing', -100, -160);
    const pr402 = prRow(402, 'testing', -100, -160);
    const pr403 = prRow(403, 'pending', -50, -80);
    const entry403 = pr403.queueEntry as Record<string, unknown>;
    delete entry403.priorityName;
    Object.assign(entry403, { priorityValue: 0, skipsTheLine: true });
    rows.push(pr403, pr402, pr401);
    for (const number of [401, 402]) {
      step(fake, number, 'notReady', -160, 'USER_REQUESTED');
      step(fake, number, 'pending', -130, 'MERGE_ITEM_NOW_READY');
      step(fake, number, 'testing', -100, null);
    }
    step(fake, 403, 'notReady', -80, 'USER_REQUESTED');
    step(fake, 403, 'pending', -50, 'MERGE_ITEM_NOW_READY');
    setWebRun(runRow('u1', 'inProgress', -100, -100, [401]));
    setWebRun(runRow('u2', 'inProgress', -100, -100, [402]));

    const { exporter, pollsAt } = await storyExporter(
      fake,
      '  - repo: github.com/acme/web\n    branches: [main]',
      [WEB_QUEUE],
    );
    await pollsAt(0);
    const atPoll0 = await exporter.samples();

    // Between polls 0 and 1: u2 fails #402 at 100 (ci/build), which waits in pendingFailure for
    // #401 ahead; its testing result has no outcome ("absent when Trunk reports no
    // classification"). The queue drains (code freeze).
    setWebRun(
      runRow('u2', 'failed', -100, 100, [402], { checks: [checkRow('ci/build', 'failure')] }),
    );
    step(fake, 402, 'pendingFailure', 100, null);
    const unclassified: Record<string, unknown> = result(402, 'u2', -100, 100, 'failed');
    delete unclassified.outcome;
    results.push(unclassified);
    move(pr402, 'pendingFailure', 100);
    queueRow.state = 'draining';
    await pollsAt(300);
    const atPoll1 = await exporter.samples();

    // Between polls 1 and 2: u1 passes #401 at 400, merged at 410, so #402 fails at 410 on its
    // own. #403 is removed at 450 with no reason given and submitted again at 460 (the entry is
    // reused: "an ordinary resubmission after a cancellation reuses it"). The queue runs again.
    setWebRun(runRow('u1', 'succeeded', -100, 400, [401]));
    step(fake, 401, 'testsPassed', 400, 'TEST_RUN_PASSED');
    step(fake, 401, 'merged', 410, 'MERGE_GRAPH_MERGE');
    results.push(result(401, 'u1', -100, 400, 'passed', { entryConclusion: 'merged' }));
    move(pr401, 'merged', 410);
    step(fake, 402, 'failed', 410, 'TEST_RUN_REQUIRED_STATUS_FAILED');
    move(pr402, 'failed', 410);
    step(fake, 403, 'cancelled', 450, null);
    step(fake, 403, 'notReady', 460, 'USER_REQUESTED');
    resubmitEntry(pr403, T + 450, T + 460);
    queueRow.state = 'running';
    await pollsAt(600);

    // Between polls 2 and 3: #403 is removed at 700, never ready in time. The queue is in a
    // state the definition does not name (Trunk may add enum members) from poll 3 to poll 4.
    step(fake, 403, 'cancelled', 700, 'NOT_READY_TIMEOUT_EXPIRED');
    move(pr403, 'cancelled', 700);
    queueRow.state = 'frozen';
    await pollsAt(900);
    queueRow.state = 'running';
    await pollsAt(1200);
    await pollsAt(1500);
    const atEnd = await exporter.samples();

    // Priority 0 without a name: `unknown` ("do not infer one from the other").
    expect(series(atPoll0, 'trunk_merge_queue_pull_requests', ['state', 'priority'])).toEqual({
      'not_ready/medium': 0,
      'pending/medium': 0,
      'pending/unknown': 1, // #403
      'testing/medium': 2, // #401, #402
      'tests_passed/medium': 0,
      'pending_failure/medium': 0,
    });
    expect(series(atPoll1, 'trunk_merge_queue_pull_requests', ['state', 'priority'])).toEqual({
      'not_ready/medium': 0,
      'pending/medium': 0,
      'pending/unknown': 1, // #403
      'testing/medium': 1, // #401
      'tests_passed/medium': 0,
      'pending_failure/medium': 1, // #402
    });
    expect(
      series(atPoll1, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', ['state']),
    ).toEqual({ pending: T - 50, testing: T - 100, pending_failure: T + 100 });
    expect(series(atPoll1, 'trunk_merge_queue_oldest_pull_request_number', ['state'])).toEqual({
      pending: 403,
      testing: 401,
      pending_failure: 402,
    });
    expect(series(atPoll1, 'trunk_merge_queue_state', ['state'])).toEqual({
      running: 0,
      paused: 0,
      draining: 1,
      switching_modes: 0,
    });

    // Exits: #401 merged at 410; #402 failed at 410; #403's first stay ended between polls 1 and
    // 2 with no testing result to say how (`unknown`, as the docs say); its second was cancelled
    // at 700.
    expectExits(atEnd, { merged: 1, failed: 1, cancelled: 1, unknown: 1 });
    expect(series(atEnd, FAILED, ['reason'])).toEqual({ TEST_RUN_REQUIRED_STATUS_FAILED: 1 });
    // A null reason is `unknown`.
    expect(series(atEnd, CANCELLED, ['reason'])).toEqual({
      unknown: 1, // #403 at 450
      NOT_READY_TIMEOUT_EXPIRED: 1, // #403 at 700
    });
    expect(series(atEnd, 'trunk_merge_queue_restarts_total', ['cause'])).toEqual({});
    // Each step of the timelines once: the history's steps stand for the polls' pending →
    // (an exit of unknown outcome) of #403, never beside them.
    expect(series(atEnd, TRANSITIONS, ['from', 'to'])).toEqual({
      'testing/pending_failure': 1, // #402 at 100
      'pending_failure/failed': 1, // #402 at 410
      'testing/tests_passed': 1, // #401 at 400
      'tests_passed/merged': 1, // #401 at 410
      'pending/cancelled': 1, // #403 at 450
      'cancelled/not_ready': 1, // #403 at 460
      'not_ready/cancelled': 1, // #403 at 700
    });
    //   merged: #401 410 − (−100) = 510; failed: #402 410 − (−100) = 510
    //   cancelled: #403 700 − 460 = 240
    //   unknown: #403 −50 → 300, the earliest its conclusion can be (poll 1 listed it pending;
    //            no testing result dates it) = 350
    expect(histogram(atEnd, IN_QUEUE, ['outcome'])).toEqual({
      merged: { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 510, count: 1 },
      failed: { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 510, count: 1 },
      cancelled: { buckets: [1, 1, 1, 1, 1, 1, 1, 1, 1], sum: 240, count: 1 },
      unknown: { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 350, count: 1 },
    });
    //   testing: #402 −100 → 100 = 200; #401 −100 → 410 = 510
    //   pending_failure: #402 100 → 410 = 310; not_ready: #403 460 → 700 = 240
    //   #403's pending stretch ended at a time nobody tells: not observed.
    expect(histogram(atEnd, IN_STATE, ['state'])).toEqual({
      testing: { buckets: [1, 2, 2, 2, 2, 2, 2, 2, 2], sum: 710, count: 2 },
      pending_failure: { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 310, count: 1 },
      not_ready: { buckets: [1, 1, 1, 1, 1, 1, 1, 1, 1], sum: 240, count: 1 },
    });
    // Five intervals: running, draining, running, frozen, running.
    expect(series(atEnd, 'trunk_merge_queue_state_seconds_total', ['state'])).toEqual({
      running: 900,
      paused: 0,
      draining: 300,
      switching_modes: 0,
      frozen: 300,
    });
    // u1's #401 passed after 500 s; u2's #402 attempt of 200 s has no outcome: `unknown`, its
    // series from its first attempt.
    expect(histogram(atEnd, TESTING, ['outcome', 'bisection'])).toEqual({
      'passed/false': { buckets: [0, 0, 1, 1, 1, 1, 1, 1, 1], sum: 500, count: 1 },
      'failed/false': empty(8),
      'interrupted/false': empty(8),
      'cancelled/false': empty(8),
      'unknown/false': { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 200, count: 1 },
    });
    expect(series(atEnd, RUNS, ['status', 'bisection'])).toEqual({
      'succeeded/false': 1, // u1
      'failed/false': 1, // u2
      'cancelled/false': 0,
    });
    expect(histogram(atEnd, DURATION, ['status', 'bisection'])).toEqual({
      'failed/false': { buckets: [0, 1, 1, 1, 1, 1, 1, 1, 1], sum: 200, count: 1 },
      'succeeded/false': { buckets: [0, 0, 1, 1, 1, 1, 1, 1, 1], sum: 500, count: 1 },
    });
    expect(series(atEnd, CHECKS, ['check'])).toEqual({ 'ci/build': 1 });
    expect(series(atEnd, 'trunk_merge_queue_last_merge_timestamp_seconds', [])).toEqual({
      '': T + 410,
    });
  }, 60_000);

  it('counts a failure and resubmission between two polls that no departure shows, with its steps, and its exit from the periodic read of concluded entries', async () => {
    // #501 fails at 100 and is submitted again at once; poll 1 lists it pending since 120: no PR
    // gone, none back in notReady, so no read of concluded entries then ("otherwise once every 30
    // polls"). Its timeline tells the steps; the periodic read finds the exit.
    vi.useFakeTimers({ toFake: ['Date'], now: T * 1000 });
    const pr501 = prRow(501, 'testing', -100, -160);
    const fake = await startFakeV2({
      queues: pageAt('merge-queues-of-an-organization.json'),
      entries: { [WEB_QUEUE]: [pr501] },
    });
    step(fake, 501, 'notReady', -160, 'USER_REQUESTED');
    step(fake, 501, 'pending', -130, 'MERGE_ITEM_NOW_READY');
    step(fake, 501, 'testing', -100, null);
    setRun(fake, WEB_QUEUE, runRow('v1', 'inProgress', -100, -100, [501]));
    const { exporter, pollsAt } = await storyExporter(
      fake,
      '  - repo: github.com/acme/web\n    branches: [main]',
      [WEB_QUEUE],
    );
    /** Reads of the queue's concluded entries, the first poll's reads of its last merge aside. */
    const exitReads = () =>
      fake.requests.filter(
        ({ url }) => url.includes('concludedAfter') && !url.includes('state=merged'),
      ).length;
    await pollsAt(0);

    setRun(
      fake,
      WEB_QUEUE,
      runRow('v1', 'failed', -100, 100, [501], { checks: [checkRow('ci/build', 'failure')] }),
    );
    step(fake, 501, 'failed', 100, 'TEST_RUN_REQUIRED_STATUS_FAILED');
    step(fake, 501, 'notReady', 110, 'USER_REQUESTED');
    step(fake, 501, 'pending', 120, 'MERGE_ITEM_NOW_READY');
    (fake.testingResults(WEB_QUEUE) as unknown[]).push(
      result(501, 'v1', -100, 100, 'failed', { entryConclusion: 'failed' }),
    );
    resubmitEntry(pr501, T + 100, T + 110, 'entry-501-b');
    move(pr501, 'pending', 120);
    await pollsAt(300);
    expect(exitReads()).toBe(0);
    // Thirty-five more polls, the periodic read among them.
    await pollsAt(600, 35);
    await pollsAt(900);
    expect(exitReads()).toBeGreaterThanOrEqual(1);
    const atEnd = await exporter.samples();

    expectExits(atEnd, { failed: 1 });
    expect(series(atEnd, FAILED, ['reason'])).toEqual({ TEST_RUN_REQUIRED_STATUS_FAILED: 1 });
    // The history's steps stand for the polls' testing → pending.
    expect(series(atEnd, TRANSITIONS, ['from', 'to'])).toEqual({
      'testing/failed': 1,
      'failed/not_ready': 1,
      'not_ready/pending': 1,
    });
    // −100 → 100, its testing result's end (the earliest its conclusion can be).
    expect(histogram(atEnd, IN_QUEUE, ['outcome'])).toEqual({
      merged: empty(8),
      failed: { buckets: [1, 1, 1, 1, 1, 1, 1, 1, 1], sum: 200, count: 1 },
      cancelled: empty(8),
    });
    // The polls saw testing since −100, then pending since 120: 220 s, stateChangedAt to
    // stateChangedAt.
    expect(histogram(atEnd, IN_STATE, ['state'])).toEqual({
      testing: { buckets: [1, 1, 1, 1, 1, 1, 1, 1, 1], sum: 220, count: 1 },
    });
    expect(series(atEnd, 'trunk_merge_queue_pull_requests', ['state', 'priority'])).toEqual({
      'not_ready/medium': 0,
      'pending/medium': 1,
      'testing/medium': 0,
      'tests_passed/medium': 0,
      'pending_failure/medium': 0,
    });
    expect(series(atEnd, CHECKS, ['check'])).toEqual({ 'ci/build': 1 });
  }, 60_000);
});

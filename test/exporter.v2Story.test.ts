// One merge queue's hour through API v2, every number of its "why" and flow families counted by
// hand (issue 39): a real exporter holding only an API key polls a fake organization ten times, five
// minutes apart on a clock the test sets, while pull requests are submitted, tested in batches,
// restarted by a push to the target branch, by a failure ahead and by an urgent entry, bisected,
// failed, resubmitted, merged and cancelled, one of them entering and leaving between two polls.
// Every answer is written here as Trunk's definition shapes it (`../shared/trunk-openapi-v2/`);
// every expected sample is a literal counted from the story below, with its arithmetic beside it.
//
// Trunk's words the counts rest on:
// - queue-entry history: a transition's `reason` is "Why the entry entered this state. `null` for
//   `testing` and `pendingFailure`"; `pending` reasons "are what distinguish a restart's cause"
//   (`MANUAL_PUSH_TO_TARGET_BRANCH`, `PREREQUISITE_MERGE_ITEM_FAILED`, `SKIP_THE_LINE_INTERRUPTED`,
//   `BISECTION_REQUIRED`, `BISECTION_TEST_RUN_PASSED`, …).
// - the list's `concludedAfter`: "an entry that failed in the window and was later resubmitted
//   still matches".
// - a testing result: "A pull request appears once per attempt … a batched run appears once per
//   pull request it tested"; `outcome` `failed` is "the run failed, or the pull request entered
//   bisection", `interrupted` "cut short and will be retried (a restart, a preemption …)".
// - a verification run: `updatedAt` "For a finished run this approximates when it concluded";
//   "A check in `checks` is required iff its `name` is in this list" (`requiredStatuses`).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { select } from './support/exposition.js';
import { pageAt, startFakeV2, type EntryRow } from './support/fakeTrunkV2.js';
import { WEB_QUEUE, resubmitEntry } from './support/queueEntryRows.js';
import { checkRow } from './support/verificationRunRows.js';
import {
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
  iso,
  move,
  prRow,
  result,
  runRow,
  series,
  setRun,
  step,
  storyExporter,
} from './support/v2Story.js';
import { WEB_MAIN } from './support/webQueueSamples.js';
import { cleanUp } from './trunk/harness.js';

afterEach(async () => {
  vi.useRealTimers();
  await cleanUp();
});

describe('a batching queue through API v2 and a real exporter, every number by hand', () => {
  it('counts exits, reasons, restarts, transitions, runs, attempts and the gauges of a ten-poll story', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: T * 1000 });
    const queues = pageAt('merge-queues-one-batching-queue.json');
    const queueRow = queues.data[0] as { state: string };
    const rows: EntryRow[] = [];
    const fake = await startFakeV2({ queues, entries: { [WEB_QUEUE]: rows } });
    const results = fake.testingResults(WEB_QUEUE) as unknown[];
    const setWebRun = (row: Record<string, unknown>) => {
      setRun(fake, WEB_QUEUE, row);
    };

    // Before poll 0: #101 and #102 submitted at −600, ready at −540, tested together on run r1
    // since −480; #103 submitted at −120, not ready (its branch conflicts with main and is
    // behind it); #104 (high) submitted at −90, pending since −60.
    const pr101 = prRow(101, 'testing', -480, -600);
    const pr102 = prRow(102, 'testing', -480, -600);
    const pr103 = prRow(103, 'notReady', -120, -120);
    Object.assign(pr103.queueEntry, {
      readiness: {
        requiresImpactedTargets: false,
        doesBaseBranchMatch: true,
        mergeability: 'notMergeable',
        mergeabilityDetails: {
          provider: 'github',
          reasons: [
            { code: 'conflict', message: 'merge conflict in src/app.ts' },
            { code: 'behind', message: 'the branch is behind main' },
          ],
        },
      },
    });
    const pr104 = prRow(104, 'pending', -60, -90);
    Object.assign(pr104.queueEntry, { priorityName: 'high', priorityValue: 10 });
    rows.push(pr104, pr103, pr102, pr101);
    for (const number of [101, 102]) {
      step(fake, number, 'notReady', -600, 'USER_REQUESTED');
      step(fake, number, 'pending', -540, 'MERGE_ITEM_NOW_READY');
      step(fake, number, 'testing', -480, null);
    }
    step(fake, 103, 'notReady', -120, 'USER_REQUESTED');
    step(fake, 104, 'notReady', -90, 'USER_REQUESTED');
    step(fake, 104, 'pending', -60, 'MERGE_ITEM_NOW_READY');
    setWebRun(runRow('r1', 'inProgress', -480, -480, [101, 102]));

    const { exporter, pollsAt } = await storyExporter(
      fake,
      '  - repo: github.com/acme/web\n    branches: [main]',
      [WEB_QUEUE],
    );
    await pollsAt(0);
    const atPoll0 = await exporter.samples();

    // Between polls 0 and 1: a push to main at 100 restarts #101 and #102 (r1 cancelled, both
    // attempts interrupted after 580 s); they test again on r2 from 120.
    for (const number of [101, 102]) {
      step(fake, number, 'pending', 100, 'MANUAL_PUSH_TO_TARGET_BRANCH');
      step(fake, number, 'testing', 120, null);
      results.push(result(number, 'r1', -480, 100, 'interrupted'));
    }
    setWebRun(runRow('r1', 'cancelled', -480, 100, [101, 102]));
    setWebRun(runRow('r2', 'inProgress', 120, 120, [101, 102]));
    move(pr101, 'testing', 120);
    move(pr102, 'testing', 120);
    await pollsAt(300);

    // Between polls 1 and 2: r2 fails at 400 on the required ci/build (and the optional lint);
    // the batch is bisected: #101 on r3 and #102 on r4 from 420. #104 tests on r5 from 420.
    setWebRun(
      runRow('r2', 'failed', 120, 400, [101, 102], {
        checks: [checkRow('ci/build', 'failure'), checkRow('lint', 'failure')],
      }),
    );
    for (const number of [101, 102]) {
      step(fake, number, 'pending', 400, 'BISECTION_REQUIRED');
      step(fake, number, 'testing', 420, null);
      results.push(result(number, 'r2', 120, 400, 'failed', { startedBisection: true }));
    }
    setWebRun(runRow('r3', 'inProgress', 420, 420, [101], { isBisection: true }));
    setWebRun(runRow('r4', 'inProgress', 420, 420, [102], { isBisection: true }));
    setWebRun(runRow('r5', 'inProgress', 420, 420, [104]));
    step(fake, 104, 'testing', 420, null);
    move(pr101, 'testing', 420);
    move(pr102, 'testing', 420);
    move(pr104, 'testing', 420);
    await pollsAt(600);
    const atPoll2 = await exporter.samples();

    // Between polls 2 and 3: bisection step r3 fails #101 at 700 (ci/build); r4 clears #102,
    // back in line at 700; #104, behind the failed #101, restarts at 700 (r5 cancelled). #102 and
    // #104 test together on r6 from 720. #105 is submitted at 750 and closed at 800: no poll
    // lists it. The queue is paused at 850.
    setWebRun(
      runRow('r3', 'failed', 420, 700, [101], {
        isBisection: true,
        checks: [checkRow('ci/build', 'failure'), checkRow('lint', 'success')],
      }),
    );
    setWebRun(runRow('r4', 'succeeded', 420, 700, [102], { isBisection: true }));
    setWebRun(runRow('r5', 'cancelled', 420, 700, [104]));
    setWebRun(runRow('r6', 'inProgress', 720, 720, [102, 104]));
    step(fake, 101, 'failed', 700, 'TEST_RUN_REQUIRED_STATUS_FAILED');
    results.push(
      result(101, 'r3', 420, 700, 'failed', { isBisection: true, entryConclusion: 'failed' }),
    );
    step(fake, 102, 'pending', 700, 'BISECTION_TEST_RUN_PASSED');
    results.push(result(102, 'r4', 420, 700, 'passed', { isBisection: true }));
    step(fake, 104, 'pending', 700, 'PREREQUISITE_MERGE_ITEM_FAILED');
    results.push(result(104, 'r5', 420, 700, 'interrupted'));
    for (const number of [102, 104]) step(fake, number, 'testing', 720, null);
    move(pr101, 'failed', 700);
    move(pr102, 'testing', 720);
    move(pr104, 'testing', 720);
    const pr105 = prRow(105, 'cancelled', 800, 750);
    rows.unshift(pr105);
    step(fake, 105, 'notReady', 750, 'USER_REQUESTED');
    step(fake, 105, 'cancelled', 800, 'PR_CLOSED');
    queueRow.state = 'paused';
    await pollsAt(900);

    // Between polls 3 and 4: the queue runs again at 950; r6 passes at 1000, #102 and #104 merge
    // at 1010. #103 is rebased: ready at 1100. #101 is submitted again at 1150 (a new entry).
    queueRow.state = 'running';
    setWebRun(
      runRow('r6', 'succeeded', 720, 1000, [102, 104], {
        checks: [checkRow('ci/build', 'success'), checkRow('lint', 'failure')],
      }),
    );
    for (const number of [102, 104]) {
      step(fake, number, 'testsPassed', 1000, 'TEST_RUN_PASSED');
      step(fake, number, 'merged', 1010, 'MERGE_GRAPH_MERGE');
      results.push(result(number, 'r6', 720, 1000, 'passed', { entryConclusion: 'merged' }));
    }
    move(pr102, 'merged', 1010);
    move(pr104, 'merged', 1010);
    step(fake, 103, 'pending', 1100, 'MERGE_ITEM_NOW_READY');
    Object.assign(pr103.queueEntry, {
      readiness: {
        requiresImpactedTargets: false,
        doesBaseBranchMatch: true,
        mergeability: 'mergeable',
      },
    });
    move(pr103, 'pending', 1100);
    step(fake, 101, 'notReady', 1150, 'USER_REQUESTED');
    resubmitEntry(pr101, T + 700, T + 1150, 'entry-101-b');
    // #105 is reopened and submitted again at 1160 (its entry reused, so its createdAt still
    // says 750: "an ordinary resubmission after a cancellation reuses it") and closed again at
    // 1180: no poll lists this stay either.
    pr105.earlierConclusions = [iso(800)];
    step(fake, 105, 'notReady', 1160, 'USER_REQUESTED');
    step(fake, 105, 'cancelled', 1180, 'PR_CLOSED');
    move(pr105, 'cancelled', 1180);
    await pollsAt(1200);

    // Between polls 4 and 5: #101 ready at 1220; #101 and #103 test on r7 from 1240; urgent #106
    // (submitted 1250, ready 1260) interrupts them at 1300 (r7 cancelled) and tests on r8.
    step(fake, 101, 'pending', 1220, 'MERGE_ITEM_NOW_READY');
    for (const number of [101, 103]) {
      step(fake, number, 'testing', 1240, null);
      step(fake, number, 'pending', 1300, 'SKIP_THE_LINE_INTERRUPTED');
      results.push(result(number, 'r7', 1240, 1300, 'interrupted'));
    }
    setWebRun(runRow('r7', 'cancelled', 1240, 1300, [101, 103]));
    setWebRun(runRow('r8', 'inProgress', 1300, 1300, [106]));
    move(pr101, 'pending', 1300);
    move(pr103, 'pending', 1300);
    const pr106 = prRow(106, 'testing', 1300, 1250);
    Object.assign(pr106.queueEntry, {
      priorityName: 'urgent',
      priorityValue: 0,
      skipsTheLine: true,
    });
    rows.unshift(pr106);
    step(fake, 106, 'notReady', 1250, 'USER_REQUESTED');
    step(fake, 106, 'pending', 1260, 'MERGE_ITEM_NOW_READY');
    step(fake, 106, 'testing', 1300, null);
    await pollsAt(1500);

    // Between polls 5 and 6: r8 passes at 1600, #106 merges at 1610; #101 and #103 test on r9
    // from 1620.
    setWebRun(
      runRow('r8', 'succeeded', 1300, 1600, [106], { checks: [checkRow('ci/build', 'success')] }),
    );
    step(fake, 106, 'testsPassed', 1600, 'TEST_RUN_PASSED');
    step(fake, 106, 'merged', 1610, 'MERGE_GRAPH_MERGE');
    results.push(result(106, 'r8', 1300, 1600, 'passed', { entryConclusion: 'merged' }));
    move(pr106, 'merged', 1610);
    for (const number of [101, 103]) step(fake, number, 'testing', 1620, null);
    setWebRun(runRow('r9', 'inProgress', 1620, 1620, [101, 103]));
    move(pr101, 'testing', 1620);
    move(pr103, 'testing', 1620);
    await pollsAt(1800);

    // Between polls 6 and 7: r9 fails at 1900 (ci/build and lint): bisected, #101 on r10 and #103
    // on r11 from 1920. r10 fails #101 at 2000 and its author submits it again at 2010 (a new
    // entry); r11 clears #103 at 2000, which tests alone on r12 from 2020.
    setWebRun(
      runRow('r9', 'failed', 1620, 1900, [101, 103], {
        checks: [checkRow('ci/build', 'failure'), checkRow('lint', 'failure')],
      }),
    );
    for (const number of [101, 103]) {
      step(fake, number, 'pending', 1900, 'BISECTION_REQUIRED');
      step(fake, number, 'testing', 1920, null);
      results.push(result(number, 'r9', 1620, 1900, 'failed', { startedBisection: true }));
    }
    setWebRun(
      runRow('r10', 'failed', 1920, 2000, [101], {
        isBisection: true,
        checks: [checkRow('ci/build', 'failure')],
      }),
    );
    setWebRun(runRow('r11', 'succeeded', 1920, 2000, [103], { isBisection: true }));
    setWebRun(runRow('r12', 'inProgress', 2020, 2020, [103]));
    step(fake, 101, 'failed', 2000, 'TEST_RUN_REQUIRED_STATUS_FAILED');
    step(fake, 101, 'notReady', 2010, 'USER_REQUESTED');
    results.push(
      result(101, 'r10', 1920, 2000, 'failed', { isBisection: true, entryConclusion: 'failed' }),
    );
    resubmitEntry(pr101, T + 2000, T + 2010, 'entry-101-c');
    step(fake, 103, 'pending', 2000, 'BISECTION_TEST_RUN_PASSED');
    step(fake, 103, 'testing', 2020, null);
    results.push(result(103, 'r11', 1920, 2000, 'passed', { isBisection: true }));
    move(pr103, 'testing', 2020);
    await pollsAt(2100);

    // Between polls 7 and 8: #101 is taken out of the queue at 2200 (never ready in time); r12
    // times out on ci/build at 2300 and #103 fails.
    step(fake, 101, 'cancelled', 2200, 'NOT_READY_TIMEOUT_EXPIRED');
    move(pr101, 'cancelled', 2200);
    setWebRun(
      runRow('r12', 'failed', 2020, 2300, [103], { checks: [checkRow('ci/build', 'timeout')] }),
    );
    step(fake, 103, 'failed', 2300, 'TEST_RUN_TIMEOUT');
    results.push(result(103, 'r12', 2020, 2300, 'failed', { entryConclusion: 'failed' }));
    move(pr103, 'failed', 2300);
    await pollsAt(2400);
    // Two quiet polls: every history read asked for is in.
    await pollsAt(2700);
    await pollsAt(3000);
    const atEnd = await exporter.samples();

    // Poll 0, the first: it counts no flow, shows what is enqueued, and the zeros the docs promise
    // from a queue's first poll (Families table, "What a queue costs").
    expect(series(atPoll0, 'trunk_merge_queue_pull_requests', ['state', 'priority'])).toEqual({
      'not_ready/medium': 1, // #103
      'pending/medium': 0,
      'pending/high': 1, // #104
      'testing/medium': 2, // #101, #102
      'tests_passed/medium': 0,
      'pending_failure/medium': 0,
    });
    expect(
      series(atPoll0, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', ['state']),
    ).toEqual({ not_ready: T - 120, pending: T - 60, testing: T - 480 });
    // #101 and #102 entered testing at the same instant: "of equal timestamps the lowest number".
    expect(series(atPoll0, 'trunk_merge_queue_oldest_pull_request_number', ['state'])).toEqual({
      not_ready: 103,
      pending: 104,
      testing: 101,
    });
    // #103 is notReady and notMergeable; through v2 no impacted_targets_missing series.
    expect(series(atPoll0, 'trunk_merge_queue_pull_requests_blocked', ['reason'])).toEqual({
      base_branch_mismatch: 0,
      not_mergeable: 1,
    });
    expect(series(atPoll0, 'trunk_merge_queue_pull_requests_not_mergeable', ['reason'])).toEqual({
      ...NO_MERGEABILITY_REASON,
      conflict: 1,
      behind: 1,
    });
    expectExits(atPoll0, {});
    // r1 in progress; the queue batches, so bisection runs are present at 0 too.
    expect(series(atPoll0, IN_PROGRESS, ['bisection'])).toEqual({ false: 1, true: 0 });
    const noRuns = {
      'succeeded/false': 0,
      'failed/false': 0,
      'cancelled/false': 0,
      'succeeded/true': 0,
      'failed/true': 0,
      'cancelled/true': 0,
    };
    expect(series(atPoll0, RUNS, ['status', 'bisection'])).toEqual(noRuns);
    expect(histogram(atPoll0, TESTING, ['outcome', 'bisection'])).toEqual({
      'passed/false': empty(8),
      'failed/false': empty(8),
      'interrupted/false': empty(8),
      'cancelled/false': empty(8),
      'passed/true': empty(8),
      'failed/true': empty(8),
    });
    expect(histogram(atPoll0, IN_QUEUE, ['outcome'])).toEqual({
      merged: empty(8),
      failed: empty(8),
      cancelled: empty(8),
    });
    for (const name of [TRANSITIONS, IN_STATE, DURATION, BATCH, CHECKS, FAILED, CANCELLED]) {
      expect(
        select(atPoll0, name, WEB_MAIN).concat(select(atPoll0, `${name}_count`, WEB_MAIN)),
      ).toEqual([]);
    }

    // Poll 2 (600): #101, #102 and #104 testing since 420 (#104 high), #103 still not ready.
    expect(series(atPoll2, 'trunk_merge_queue_pull_requests', ['state', 'priority'])).toEqual({
      'not_ready/medium': 1,
      'pending/medium': 0,
      'testing/medium': 2,
      'testing/high': 1,
      'tests_passed/medium': 0,
      'pending_failure/medium': 0,
    });
    expect(
      series(atPoll2, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', ['state']),
    ).toEqual({ not_ready: T - 120, testing: T + 420 });
    expect(series(atPoll2, 'trunk_merge_queue_oldest_pull_request_number', ['state'])).toEqual({
      not_ready: 103,
      testing: 101,
    });
    // In progress: r5 (#104), and the bisection steps r3 and r4.
    expect(series(atPoll2, IN_PROGRESS, ['bisection'])).toEqual({ false: 1, true: 2 });
    // Concluded so far: r1 cancelled at 100, r2 failed at 400.
    expect(series(atPoll2, RUNS, ['status', 'bisection'])).toEqual({
      ...noRuns,
      'cancelled/false': 1,
      'failed/false': 1,
    });

    // The end (3000): the queue is empty; every count of the hour.
    expect(series(atEnd, 'trunk_merge_queue_pull_requests', ['state', 'priority'])).toEqual({
      'not_ready/medium': 0,
      'pending/medium': 0,
      'testing/medium': 0,
      'tests_passed/medium': 0,
      'pending_failure/medium': 0,
    });
    expect(
      select(atEnd, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', WEB_MAIN),
    ).toEqual([]);
    expect(select(atEnd, 'trunk_merge_queue_oldest_pull_request_number', WEB_MAIN)).toEqual([]);
    expect(series(atEnd, 'trunk_merge_queue_pull_requests_blocked', ['reason'])).toEqual({
      base_branch_mismatch: 0,
      not_mergeable: 0,
    });
    expect(series(atEnd, 'trunk_merge_queue_pull_requests_not_mergeable', ['reason'])).toEqual(
      NO_MERGEABILITY_REASON,
    );

    // Exits: #101 failed at 700 (poll 3 sees it gone); #105 cancelled at 800 and at 1180 (no poll
    // listed it: the reads of concluded entries find it, its second stay by its new
    // stateChangedAt); #102 and #104 merged at 1010; #106 merged at 1610;
    // #101 failed at 2000 and was resubmitted at 2010 (polls 6 and 7 both list it: the concluded
    // entries list it resubmitted); #101 cancelled at 2200; #103 failed at 2300.
    // merged 2 + 1 = 3; failed 1 + 1 + 1 = 3; cancelled 2 + 1 = 3.
    expectExits(atEnd, { merged: 3, failed: 3, cancelled: 3 });
    // #101's failure at 2000 is within a day of its failure at 700: one eviction loop.
    expect(series(atEnd, 'trunk_merge_queue_repeated_failures_total', [])).toEqual({ '': 1 });
    expect(series(atEnd, 'trunk_merge_queue_last_merge_timestamp_seconds', [])).toEqual({
      '': T + 1610, // #106
    });
    // Reasons of the transitions into failed and cancelled.
    expect(series(atEnd, FAILED, ['reason'])).toEqual({
      TEST_RUN_REQUIRED_STATUS_FAILED: 2, // #101 at 700 and 2000
      TEST_RUN_TIMEOUT: 1, // #103 at 2300
    });
    expect(series(atEnd, CANCELLED, ['reason'])).toEqual({
      PR_CLOSED: 2, // #105 at 800 and 1180
      NOT_READY_TIMEOUT_EXPIRED: 1, // #101 at 2200
    });
    // Restarts: into pending from testing, testsPassed or pendingFailure, by reason. Not one:
    // notReady → pending (MERGE_ITEM_NOW_READY: #103 at 1100, #101 at 1220, #106 at 1260).
    expect(series(atEnd, 'trunk_merge_queue_restarts_total', ['cause'])).toEqual({
      MANUAL_PUSH_TO_TARGET_BRANCH: 2, // #101, #102 at 100
      BISECTION_REQUIRED: 4, // #101, #102 at 400; #101, #103 at 1900
      BISECTION_TEST_RUN_PASSED: 2, // #102 at 700, #103 at 2000
      PREREQUISITE_MERGE_ITEM_FAILED: 1, // #104 at 700
      SKIP_THE_LINE_INTERRUPTED: 2, // #101, #103 at 1300
    });
    // Every step of every timeline after poll 0, each once:
    //   #101 testing→pending 100, 400, 1300, 1900 (4); pending→testing 120, 420, 1240, 1620, 1920
    //        (5); testing→failed 700, 2000; notReady→pending 1220; failed→notReady 2010;
    //        notReady→cancelled 2200
    //   #102 testing→pending 100, 400, 700 (3); pending→testing 120, 420, 720 (3);
    //        testing→testsPassed 1000; testsPassed→merged 1010
    //   #103 notReady→pending 1100; pending→testing 1240, 1620, 1920, 2020 (4); testing→pending
    //        1300, 1900, 2000 (3); testing→failed 2300
    //   #104 pending→testing 420, 720 (2); testing→pending 700; testing→testsPassed 1000;
    //        testsPassed→merged 1010
    //   #105 notReady→cancelled 800, 1180 (cancelled→notReady at 1160 begins a stay no poll
    //        listed)
    //   #106 notReady→pending 1260; pending→testing 1300; testing→testsPassed 1600;
    //        testsPassed→merged 1610
    // testing→pending 4 + 3 + 3 + 1 = 11; pending→testing 5 + 3 + 4 + 2 + 1 = 15.
    // #101's failed→notReady at 1150 is not counted: poll 3 saw #101 gone, poll 4 lists it anew,
    // and a pull request listed anew counts the steps of its stay after the one that began it
    // (eca6d3e). docs/metrics.md says the history adds "a failure and a resubmission" between two
    // polls, but not whether the step that begins a stay the polls did not see begin counts: this
    // pins what the exporter does.
    expect(series(atEnd, TRANSITIONS, ['from', 'to'])).toEqual({
      'testing/pending': 11,
      'pending/testing': 15,
      'testing/failed': 3, // #101 twice, #103
      'not_ready/cancelled': 3, // #105 twice, #101
      'testing/tests_passed': 3, // #102, #104, #106
      'tests_passed/merged': 3,
      'not_ready/pending': 3, // #103, #101, #106
      'failed/not_ready': 1, // #101 at 2010
    });

    // Time in queue, from the stay's first state change a poll saw (for a PR queued before poll 0,
    // its state change then) to its conclusion:
    //   merged: #102 1010 − (−480) = 1490; #104 1010 − (−60) = 1070; #106 1610 − 1300 = 310
    //   failed: #101 700 − (−480) = 1180; #101 2000 − 1150 = 850 (the conclusion no poll listed,
    //           at the earliest it can be: its testing result with entryConclusion ended at 2000);
    //           #103 2300 − (−120) = 2420
    //   cancelled: #105 800 − 750 = 50 (its entry's createdAt to its stateChangedAt);
    //              #105 1180 − 900 = 280 (its createdAt, 750, is from before poll 3, the last
    //              that would have listed the entry: "that poll's time is" used);
    //              #101 2200 − 2010 = 190
    // Bounds 300, 600, 1200, 1800, 3600, 7200, 14400, 86400, +Inf.
    expect(histogram(atEnd, IN_QUEUE, ['outcome'])).toEqual({
      merged: { buckets: [0, 1, 2, 3, 3, 3, 3, 3, 3], sum: 2870, count: 3 }, // 1490+1070+310
      failed: { buckets: [0, 0, 2, 2, 3, 3, 3, 3, 3], sum: 4450, count: 3 }, // 1180+850+2420
      cancelled: { buckets: [3, 3, 3, 3, 3, 3, 3, 3, 3], sum: 520, count: 3 }, // 50+280+190
    });
    // Time in the state a PR left, on the transitions the polls saw, stateChangedAt to
    // stateChangedAt (a PR listed again in its state since later re-entered it: nothing):
    //   pending: #104 −60 → 420 = 480; #101 1300 → 1620 = 320; #103 1300 → 1620 = 320
    //   testing: #101 420 → 700 = 280; #102 720 → 1010 = 290; #104 720 → 1010 = 290;
    //            #106 1300 → 1610 = 310; #101 1620 → 2000 = 380; #103 2020 → 2300 = 280
    //   not_ready: #103 −120 → 1100 = 1220; #101 1150 → 1300 = 150; #101 2010 → 2200 = 190
    expect(histogram(atEnd, IN_STATE, ['state'])).toEqual({
      pending: { buckets: [0, 3, 3, 3, 3, 3, 3, 3, 3], sum: 1120, count: 3 },
      testing: { buckets: [4, 6, 6, 6, 6, 6, 6, 6, 6], sum: 1830, count: 6 },
      not_ready: { buckets: [2, 2, 2, 3, 3, 3, 3, 3, 3], sum: 1560, count: 3 },
    });
    // Ten intervals of 300 s; the one after poll 3 starts paused.
    expect(series(atEnd, 'trunk_merge_queue_state_seconds_total', ['state'])).toEqual({
      running: 2700, // 9 × 300
      paused: 300,
      draining: 0,
      switching_modes: 0,
    });

    // Testing attempts (the results above), by outcome and whether a bisection step:
    //   passed/false: #102 r6 280, #104 r6 280, #106 r8 300 → 860
    //   failed/false: r2 #101 280, #102 280; r9 #101 280, #103 280; r12 #103 280 → 1400
    //   interrupted/false: r1 #101 580, #102 580; r5 #104 280; r7 #101 60, #103 60 → 1560
    //   passed/true: r4 #102 280, r11 #103 80 → 360; failed/true: r3 #101 280, r10 #101 80 → 360
    // Bounds 60, 300, 600, 1200, 1800, 3600, 7200, 14400, +Inf.
    expect(histogram(atEnd, TESTING, ['outcome', 'bisection'])).toEqual({
      'passed/false': { buckets: [0, 3, 3, 3, 3, 3, 3, 3, 3], sum: 860, count: 3 },
      'failed/false': { buckets: [0, 5, 5, 5, 5, 5, 5, 5, 5], sum: 1400, count: 5 },
      'interrupted/false': { buckets: [2, 3, 5, 5, 5, 5, 5, 5, 5], sum: 1560, count: 5 },
      'cancelled/false': empty(8),
      'passed/true': { buckets: [0, 2, 2, 2, 2, 2, 2, 2, 2], sum: 360, count: 2 },
      'failed/true': { buckets: [0, 2, 2, 2, 2, 2, 2, 2, 2], sum: 360, count: 2 },
    });
    // Batches split: r2 and r9 (one each, however many rows say startedBisection).
    expect(series(atEnd, 'trunk_merge_queue_bisections_started_total', [])).toEqual({ '': 2 });

    // Runs, each once: r1 cancelled (seen in progress by poll 0); r7 and r10, r11 began and
    // concluded between two polls.
    expect(series(atEnd, RUNS, ['status', 'bisection'])).toEqual({
      'failed/false': 3, // r2, r9, r12
      'cancelled/false': 3, // r1, r5, r7
      'succeeded/false': 2, // r6, r8
      'failed/true': 2, // r3, r10
      'cancelled/true': 0,
      'succeeded/true': 2, // r4, r11
    });
    expect(series(atEnd, IN_PROGRESS, ['bisection'])).toEqual({ false: 0, true: 0 });
    // updatedAt − createdAt: r2 280, r9 280, r12 280; r1 580, r5 280, r7 60; r6 280, r8 300;
    // r3 280, r10 80; r4 280, r11 80.
    expect(histogram(atEnd, DURATION, ['status', 'bisection'])).toEqual({
      'failed/false': { buckets: [0, 3, 3, 3, 3, 3, 3, 3, 3], sum: 840, count: 3 },
      'cancelled/false': { buckets: [1, 2, 3, 3, 3, 3, 3, 3, 3], sum: 920, count: 3 },
      'succeeded/false': { buckets: [0, 2, 2, 2, 2, 2, 2, 2, 2], sum: 580, count: 2 },
      'failed/true': { buckets: [0, 2, 2, 2, 2, 2, 2, 2, 2], sum: 360, count: 2 },
      'succeeded/true': { buckets: [0, 2, 2, 2, 2, 2, 2, 2, 2], sum: 360, count: 2 },
    });
    // Tested PRs per run: r1 2, r2 2, r5 1, r6 2, r7 2, r8 1, r9 2, r12 1 → 8 runs, 13 PRs;
    // bisection steps r3, r4, r10, r11 one each. Bounds 1, 2, 4, 8, 16, 32, +Inf.
    expect(histogram(atEnd, BATCH, ['bisection'])).toEqual({
      false: { buckets: [3, 8, 8, 8, 8, 8, 8], sum: 13, count: 8 },
      true: { buckets: [4, 4, 4, 4, 4, 4, 4], sum: 4, count: 4 },
    });
    // Failed runs per required check that failed them: ci/build failed r2, r3, r9, r10 and timed
    // out r12. lint (not in requiredStatuses) failed r2, r6 and r9: no series.
    expect(series(atEnd, CHECKS, ['check'])).toEqual({ 'ci/build': 5 });

    // Every request of the story as Trunk's definition asks for it: the key as a bearer token, never
    // the v1 token ("The v1 organization token (`x-api-token`) does not work on v2"); each list
    // page at the largest `limit` ("between 1 and 100"), never `includeTotal` ("Costs an extra
    // COUNT query, so it is off by default"); testing results from a `since` "At most 45 days
    // before `until`", which is left to Trunk ("Defaults to the time of the first page"); at most
    // 50 pull request ids a history read ("Comma-separated pull request ids, at most 50").
    const lists =
      /^\/v2\/(merge-queues(\/[^/]+\/(pull-requests|testing-results|verification-runs))?|queue-entry-history)$/;
    expect(fake.requests.length).toBeGreaterThan(0);
    for (const request of fake.requests) {
      const url = new URL(request.url, 'http://fake');
      expect(request.headers.authorization).toBe('Bearer trunk_v2_story-key');
      expect(request.headers['x-api-token']).toBeUndefined();
      expect(url.searchParams.has('includeTotal')).toBe(false);
      if (lists.test(url.pathname)) {
        expect(Number(url.searchParams.get('limit'))).toBeGreaterThanOrEqual(50);
        expect(Number(url.searchParams.get('limit'))).toBeLessThanOrEqual(100);
      }
      if (url.pathname.endsWith('/testing-results')) {
        expect(url.searchParams.has('until')).toBe(false);
        const since = Date.parse(url.searchParams.get('since') ?? '');
        expect(request.receivedAt - since).toBeLessThanOrEqual(45 * 86_400_000);
      }
      if (url.pathname === '/v2/queue-entry-history') {
        expect(url.searchParams.get('pullRequestIds')?.split(',').length).toBeLessThanOrEqual(50);
      }
    }
  }, 60_000);
});

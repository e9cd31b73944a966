// The bookkeeping of a queue's verification runs, read by read, every expected number worked out
// by hand from the rows and Trunk's definition of `GET /v2/merge-queues/{id}/verification-runs`:
// `createdAfter`: "Only runs created strictly after this instant"; `requiredStatuses`: "A check in
// `checks` is required iff its `name` is in this list"; `VerificationRunStatus`: "`inProgress` —
// checks are still running".
import { describe, expect, it } from 'vitest';
import {
  countVerificationRuns,
  runsFollowedById,
  startVerificationRuns,
  type FollowedRunRead,
  verificationRunReadFailed,
} from '../../src/flow/verificationRuns.js';
import { runsReadDue } from '../../src/flow/verificationRunReadsDue.js';
import { NO_ENTRIES } from '../../src/snapshot/noEntries.js';
import type { VerificationRuns } from '../../src/snapshot/verificationRunTypes.js';
import type { V2VerificationRun } from '../../src/trunk/v2VerificationRunSchemas.js';
import { poll, summary } from './scriptedPolls.js';

const T = 1_800_000_000;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

function run(
  id: string,
  status: string,
  createdAt: number,
  updatedAt: number,
  extra: Partial<V2VerificationRun> = {},
): V2VerificationRun {
  return {
    id,
    isBisection: false,
    createdAt: iso(createdAt),
    updatedAt: iso(updatedAt),
    status,
    requiredStatuses: [],
    checks: [],
    testedPullRequests: [{ number: 1 }],
    unnumberedPullRequests: 0,
    ...extra,
  };
}

/** One read at `readAt` of `rows`, the clock slack 60 s. */
const read = (runs: VerificationRuns, rows: V2VerificationRun[], readAt: number) =>
  countVerificationRuns(runs, rows, readAt, readAt + 60).runs;

const runsOf = (runs: VerificationRuns) =>
  Object.fromEntries(
    Array.from(runs.counts.concluded.values(), (series) => [
      `${series.status}/${String(series.bisection)}`,
      series.durations.count,
    ]),
  );

describe('verification-run reads', () => {
  it('counts a run once when it concludes, from where the oldest run in progress was created', () => {
    // Started at T, first read from T − 600 (a PR testing since T − 480, less 120 s).
    const start = startVerificationRuns(T, T - 600, false);
    expect(start.reads.createdAfter).toBe(T - 600);
    // Run b (T − 300) in progress, run a (T − 500) concluded at T − 10: before the start, so
    // history; run c (T − 400) concluded after the start.
    const first = read(
      start,
      [
        run('b', 'inProgress', T - 300, T - 300),
        run('c', 'cancelled', T - 400, T + 5),
        run('a', 'succeeded', T - 500, T - 10),
      ],
      T + 30,
    );
    expect(runsOf(first)).toEqual({
      'succeeded/false': 0,
      'failed/false': 0,
      'cancelled/false': 1,
    });
    expect([...first.reads.inProgress.keys()]).toEqual(['b']);
    // From 120 s before b; c and a, created before that, are forgotten.
    expect(first.reads.createdAfter).toBe(T - 420);
    expect([...first.reads.seen.keys()]).toEqual(['c']);
    // b fails after 900 s (updatedAt − createdAt); d is new and in progress.
    const second = read(
      first,
      [
        run('d', 'inProgress', T + 100, T + 100),
        run('b', 'failed', T - 300, T + 600),
        run('c', 'cancelled', T - 400, T + 5),
      ],
      T + 630,
    );
    expect(runsOf(second)).toEqual({
      'succeeded/false': 0,
      'failed/false': 1,
      'cancelled/false': 1,
    });
    expect(summary(second.counts.concluded.get('failed\u0000false')?.durations)).toMatchObject({
      count: 1,
      sum: 900,
    });
    expect(second.reads.createdAfter).toBe(T - 20);
    // Read again, nothing more counts; d concludes: from 120 s before it, the newest.
    const third = read(
      second,
      [run('d', 'succeeded', T + 100, T + 700), run('b', 'failed', T - 300, T + 600)],
      T + 720,
    );
    expect(runsOf(third)).toEqual({
      'succeeded/false': 1,
      'failed/false': 1,
      'cancelled/false': 1,
    });
    expect(third.reads.inProgress).toBe(NO_ENTRIES);
    expect(third.reads.createdAfter).toBe(T - 20);
  });

  it('never starts a read after the clock plus the slack, nor more than a day back', () => {
    const start = startVerificationRuns(T, T - 120, false);
    // A row dated a day ahead: counted, and the next read starts at T + 30 + 60.
    const ahead = countVerificationRuns(
      start,
      [run('x', 'succeeded', T + 86_400, T + 86_460)],
      T + 30,
      T + 90,
    );
    expect(ahead.futureRuns).toBe(1);
    expect(ahead.runs.reads.createdAfter).toBe(T + 90);
    // A run in progress for two days no longer holds reads back: it is followed by id.
    const stuck = read(start, [run('s', 'inProgress', T - 60, T - 60)], T + 2 * 86_400);
    expect(stuck.reads.createdAfter).toBe(T + 86_400);
    expect(runsFollowedById(stuck.reads)).toEqual(['s']);
  });

  it('follows by id the runs in progress past the horizon, at most 20, counts one once when it concludes, and drops one answered 404', () => {
    const start = startVerificationRuns(T, T - 120, false);
    // 22 runs in progress created T − 21 … T (s0 the oldest), read two days on: past the horizon.
    const stuck = Array.from({ length: 22 }, (_unused, index) =>
      run(`s${String(index)}`, 'inProgress', T - 21 + index, T - 21 + index),
    );
    const counted = countVerificationRuns(start, stuck, T + 2 * 86_400, T + 2 * 86_400 + 60);
    // The two oldest go, oldest first; the 20 newest stay in progress, the next read asking each.
    expect(counted.unfollowed).toEqual(['s0', 's1']);
    const first = counted.runs;
    expect(first.reads.inProgress.size).toBe(20);
    expect(runsFollowedById(first.reads)).toHaveLength(20);
    // Read by id: s2 concluded failed, s3 answered 404, s4 still in progress, the others' reads
    // failed (kept as they were); the list lists nothing new.
    const followed = new Map<string, FollowedRunRead>([
      ['s2', run('s2', 'failed', T - 19, T + 2 * 86_400 + 10)],
      ['s3', 'gone'],
      ['s4', run('s4', 'inProgress', T - 17, T - 17, { isBisection: true })],
    ]);
    const second = countVerificationRuns(
      first,
      [],
      T + 2 * 86_400 + 30,
      T + 2 * 86_400 + 90,
      followed,
    );
    expect(runsOf(second.runs)['failed/false']).toBe(1);
    expect(second.runs.reads.inProgress.size).toBe(18);
    expect(second.runs.reads.inProgress.has('s3')).toBe(false);
    expect(second.runs.reads.inProgress.get('s4')?.bisection).toBe(true);
    // A read whose calls by id all failed: each run kept as it was, s2 not counted again.
    const third = read(second.runs, [], T + 2 * 86_400 + 60);
    expect(runsOf(third)['failed/false']).toBe(1);
    expect(third.reads.inProgress.size).toBe(18);
  });

  it('remembers at most 5,000 concluded runs while one in progress holds reads back, and never counts a forgotten one again', () => {
    const start = startVerificationRuns(T, T - 120, false);
    // Run s in progress since T − 60 holds the next read at T − 180; 5,001 runs created after it,
    // one a second from T, concluded 100 s after their creation.
    const concluded = Array.from({ length: 5001 }, (_unused, index) =>
      run(`r${String(index)}`, 'succeeded', T + index, T + index + 100),
    );
    const first = read(start, [run('s', 'inProgress', T - 60, T - 60), ...concluded], T + 6000);
    expect(runsOf(first)['succeeded/false']).toBe(5001);
    // The newest 5,000 (created T + 1 … T + 5000) stay; r0, created at T, goes, and the next read
    // starts there: "Only runs created strictly after this instant". s, created before, is no
    // longer listed: it is read by id from now on.
    expect(first.reads.seen.size).toBe(5000);
    expect(first.reads.seen.has('r0')).toBe(false);
    expect(first.reads.createdAfter).toBe(T);
    expect([...first.reads.inProgress.keys()]).toEqual(['s']);
    expect(runsFollowedById(first.reads)).toEqual(['s']);
    // The same rows again (a list that lags): nothing counts twice.
    const second = read(first, [run('s', 'inProgress', T - 60, T - 60), ...concluded], T + 6030);
    expect(runsOf(second)['succeeded/false']).toBe(5001);
  });

  it('counts each failing required check once per failed run, and the 21st and 22nd names, failing no more often than the 20th, as other', () => {
    const checks = (name: string) => [
      { name, conclusion: 'failure' },
      { name, conclusion: 'failure' },
      { name: 'lint', conclusion: 'timeout' },
      { name: 'build', conclusion: 'success' },
    ];
    let runs = startVerificationRuns(T, T - 120, false);
    for (let index = 1; index <= 22; index++) {
      const name = `check-${String(index)}`;
      runs = read(
        runs,
        [
          run(`r${String(index)}`, 'failed', T + index, T + index + 60, {
            requiredStatuses: [name, 'build'],
            checks: checks(name),
          }),
        ],
        T + 100 + index,
      );
    }
    // A cancelled run with a failing required check counts no check.
    runs = read(
      runs,
      [
        run('c', 'cancelled', T + 50, T + 90, {
          requiredStatuses: ['check-1'],
          checks: checks('check-1'),
        }),
      ],
      T + 200,
    );
    expect(runs.counts.checkFailures.series.get('check-1')).toBe(1);
    expect(runs.counts.checkFailures.series.get('check-20')).toBe(1);
    expect(runs.counts.checkFailures.series.get('check-21')).toBeUndefined();
    expect(runs.counts.checkFailures.series.get('other')).toBe(2);
    expect(runs.counts.checkFailures.series.has('lint')).toBe(false);
    expect(runs.counts.checkFailures.series.size).toBe(21);
  });

  it('reads when a PR begins or ends a stretch of testing or a run in progress lost a testing PR, and after a failed read; and when a PR leaves the queue', () => {
    const before = poll(T, 'running', [
      [1, 'testing', T - 60],
      [2, 'pending', T - 60],
    ]);
    const runs = read(
      startVerificationRuns(T, T - 180, false),
      [run('a', 'inProgress', T - 60, T - 60, { testedPullRequests: [{ number: 1 }] })],
      T,
    );
    const dueAfter = (pullRequests: Parameters<typeof poll>[2]) =>
      runsReadDue(runs, before, poll(T + 30, 'running', pullRequests));
    expect(
      dueAfter([
        [1, 'testing', T - 60],
        [2, 'pending', T - 60],
      ]),
    ).toBe(false);
    // #2 entered testing.
    expect(
      dueAfter([
        [1, 'testing', T - 60],
        [2, 'testing', T + 10],
      ]),
    ).toBe(true);
    // #2 left the queue from `pending`: a run may have been created and concluded for it after
    // this poll ("A verification run is in flight for this entry" while it is `testing`, which no
    // poll saw), so the runs are read.
    expect(dueAfter([[1, 'testing', T - 60]])).toBe(true);
    // #2 reached `tests_passed` ("Verification succeeded") between the polls: a run was created
    // and concluded there, though no poll saw it testing.
    expect(
      dueAfter([
        [1, 'testing', T - 60],
        [2, 'tests_passed', T + 20],
      ]),
    ).toBe(true);
    // #1 restarted testing between the polls.
    expect(
      dueAfter([
        [1, 'testing', T + 10],
        [2, 'pending', T - 60],
      ]),
    ).toBe(true);
    // #1 left: the testing set changed, and run a lost its PR.
    const after = poll(T + 30, 'running', [[2, 'pending', T - 60]]);
    expect(runsReadDue(runs, before, after)).toBe(true);
    // Read at T + 30 with a still in progress: the next poll reads again.
    expect(runsReadDue(runs, after, poll(T + 60, 'running', [[2, 'pending', T - 60]]))).toBe(true);
    const failed = verificationRunReadFailed(runs, T + 30, 600);
    expect(failed.reads.hidden).toBe(false);
    expect(runsReadDue(failed, before, before)).toBe(true);
    expect(verificationRunReadFailed(failed, T + 601, 600).reads.hidden).toBe(true);
  });

  it("counts a run dated ahead of the clock on Trunk's clock, one dated past any skew as concluded by now, and reports both", () => {
    // Read at T + 600, the slack 60 s. Run f failed, created at T + 590 and updated at T + 900 on
    // a Trunk clock 5 minutes ahead: 310 s of CI. Run g failed, created at T, "updated" in 2100
    // (a bad row): it took at most T + 660 − T = 660 s. Each one's e2e failure is placed at
    // T + 660 at the latest.
    const start = startVerificationRuns(T, T - 120, false);
    const failing = { requiredStatuses: ['e2e'], checks: [{ name: 'e2e', conclusion: 'failure' }] };
    const counted = countVerificationRuns(
      start,
      [
        run('g', 'failed', T, Date.parse('2100-12-31T00:00:00Z') / 1000, failing),
        run('f', 'failed', T + 590, T + 900, failing),
      ],
      T + 600,
      T + 660,
    );
    expect(counted.futureRuns).toBe(2);
    const durations = [...counted.runs.counts.concluded.values()].find(
      (series) => series.status === 'failed',
    )?.durations;
    expect(durations?.count).toBe(2);
    expect(durations?.sum).toBe(310 + 660);
    expect(counted.runs.counts.checkFailures.tally.get('e2e')?.lastAt).toBe(T + 660);
  });

  it('counts each tested pull request once in a batch, however often the run lists it', () => {
    const start = startVerificationRuns(T, T - 120, true);
    const rows = [
      run('g', 'succeeded', T, T + 60, {
        testedPullRequests: [7, 7, 8, 7].map((number) => ({ number })),
      }),
    ];
    const runs = read(start, rows, T + 90);
    // Pull requests #7 and #8: a batch of 2.
    expect(runs.counts.batchSizes.get(false)?.sum).toBe(2);
  });

  it('follows 150,000 runs in progress listed by one read without failing it', () => {
    // More than a call may take as arguments: the oldest one must still be found. Two a second
    // from T, all within the day a run in progress is followed.
    const start = startVerificationRuns(T, T - 120, false);
    const rows = Array.from({ length: 150_000 }, (_, index) => {
      const createdAt = T + 75_000 - Math.floor(index / 2);
      return run(`r${index}`, 'inProgress', createdAt, createdAt);
    });
    const runs = read(start, rows, T + 80_000);
    expect(runs.reads.inProgress.size).toBe(150_000);
    // From 120 s before the oldest, created at T + 1.
    expect(runs.reads.createdAfter).toBe(T + 1 - 120);
  });
});

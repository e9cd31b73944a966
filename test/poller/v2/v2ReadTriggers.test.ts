// Which reads a merge queue's poll makes through API v2 besides its live list, over a scenario of
// polls written by hand: the poll jobs as the exporter builds them with an API key, against a fake
// organization on loopback whose live list the test moves, on a clock the test moves. Each read is
// due where its answer can have changed since the previous poll, in Trunk's words:
// - QueueEntryState: `testing` is "A verification run is in flight for this entry", `testsPassed`
//   "Verification succeeded; waiting to merge", `pendingFailure` "this entry has not been
//   re-tested yet"; and `stateChangedAt` is "When the entry entered its current `state`", so an
//   entry in the same state since the same instant at two polls made no transition between them;
// - testing results: "Testing still in progress is not included": a result appears once its PR
//   left `testing`;
// - verification runs: "Lists the queue's verification runs", created when PRs begin testing and
//   concluded when they leave it ("`cancelled` — the engine abandoned the run, typically because
//   the entry left the queue");
// - concluded entries: `concludedAfter` keeps "pull requests that reached `merged`, `failed` or
//   `cancelled` inside that window … an entry that failed in the window and was later resubmitted
//   still matches".
import { afterEach, describe, expect, it } from 'vitest';
import type { EntryRow } from '../../support/fakeTrunkV2.js';
import { WEB_QUEUE, entryRow, moveEntry } from '../../support/queueEntryRows.js';
import { conclude } from '../../support/verificationRunExporter.js';
import { run as verificationRunRow } from '../../support/verificationRunRows.js';
import { START, watchedQueue, type Read } from '../../support/v2QueuePolls.js';
import { cleanUp } from '../../trunk/harness.js';

afterEach(cleanUp);

/** A run a step creates (at the step's time) and concludes. */
interface RunStep {
  readonly id: string;
  readonly tested: number[];
  createdAt: number;
}

describe('the reads a v2 merge-queue poll makes besides its live list', () => {
  it('reads concluded entries where a PR left or is back in notReady, testing results where a stretch of testing ended, runs where one began or ended or a run in progress has no PR testing on it; each once a poll', async () => {
    const at = START - 300;
    const rows = new Map<number, EntryRow>([
      [1, entryRow(1, 'testing', at)],
      [2, entryRow(2, 'pending', at)],
      [3, entryRow(3, 'pending', at)],
      [4, entryRow(4, 'testsPassed', at)],
      [5, entryRow(5, 'notReady', at)],
      [6, entryRow(6, 'pending', at)],
    ]);
    const { fake, clock, poll } = await watchedQueue([...rows.values()]);
    const row = (number: number) => {
      const found = rows.get(number);
      if (found === undefined) throw new Error(`no #${String(number)}`);
      return found;
    };
    /** #number moves to `state` 10 s before the coming poll, as Trunk's list shows it from then. */
    const move = (number: number, state: string) => {
      moveEntry(row(number), state, clock.now - 10);
    };
    const runs = fake.verificationRuns(WEB_QUEUE);
    // The first poll starts each read's count; the scenario starts after it.
    await poll();

    /** The runs #7, then #8 and #9 (a batch) test, each created when its PRs begin testing. */
    const r7 = { id: 'r7', tested: [7], createdAt: 0 };
    const rB = { id: 'rB', tested: [8, 9], createdAt: 0 };
    /** A run that lists no pull request; the runs #6 tests on, before and after a restart. */
    const rE: RunStep = { id: 'rE', tested: [], createdAt: 0 };
    const r6 = { id: 'r6', tested: [6], createdAt: 0 };
    const r6b = { id: 'r6b', tested: [6], createdAt: 0 };
    /** #6 moves (again) to `testing` as Trunk creates `shapes`, in progress, 10 s before the coming poll. */
    const testing6On =
      (...shapes: RunStep[]) =>
      () => {
        move(6, 'testing');
        for (const shape of shapes) {
          shape.createdAt = clock.now - 10;
          runs.unshift(
            verificationRunRow({ ...shape, status: 'inProgress', updatedAt: shape.createdAt }),
          );
        }
      };
    /** Trunk cancels `shape` 5 s before the coming poll. */
    const cancel = (shape: RunStep) => () => {
      conclude(fake, { ...shape, status: 'cancelled', updatedAt: clock.now - 5 });
    };
    const moves =
      (...changes: [number, string][]) =>
      () => {
        for (const [number, state] of changes) move(number, state);
      };
    const none = () => undefined;
    // Each step: what Trunk's list shows at the coming poll, and the reads that poll must make.
    const scenario: [string, () => void, Read[]][] = [
      ['nothing moved', none, []],
      // Its run concluded when it left testing, at a poll that saw it.
      // A PR gone from the list may have been re-tested after the last poll that listed it (sent
      // back to `pending`, then tested) or tested and failed straight from `pending`: what its
      // stay ended with is not in the list, so a departure reads the testing results and runs too.
      [
        '#4 merged from testsPassed',
        moves([4, 'merged']),
        ['concluded entries', 'testing results', 'verification runs'],
      ],
      [
        '#3 cancelled from pending',
        moves([3, 'cancelled']),
        ['concluded entries', 'testing results', 'verification runs'],
      ],
      [
        '#5 cancelled from notReady',
        moves([5, 'cancelled']),
        ['concluded entries', 'testing results', 'verification runs'],
      ],
      ['#2 began testing', moves([2, 'testing']), ['verification runs']],
      ['#1 passed testing', moves([1, 'testsPassed']), ['testing results', 'verification runs']],
      // Three reasons for the runs, one read.
      [
        '#2 failed out of testing as #6 began testing',
        moves([2, 'failed'], [6, 'testing']),
        ['concluded entries', 'testing results', 'verification runs'],
      ],
      [
        '#6 testing again since a restart between the polls',
        moves([6, 'testing']),
        ['testing results', 'verification runs'],
      ],
      ['#6 restarted to pending', moves([6, 'pending']), ['testing results', 'verification runs']],
      // "has not been re-tested yet": no testing began or ended.
      ['#1 in pendingFailure from testsPassed', moves([1, 'pendingFailure']), []],
      ['#1 back to pending', moves([1, 'pending']), []],
      // "Verification succeeded": a run began and ended between the polls.
      [
        '#1 in testsPassed, its testing between the polls',
        moves([1, 'testsPassed']),
        ['testing results', 'verification runs'],
      ],
      [
        '#7 enqueued in notReady',
        () => {
          rows.set(7, entryRow(7, 'notReady', clock.now - 10));
          fake.entries(WEB_QUEUE).push(row(7));
        },
        [],
      ],
      ['#7 ready', moves([7, 'pending']), []],
      // It may have concluded and been submitted again since the previous poll.
      ['#1 back in notReady', moves([1, 'notReady']), ['concluded entries']],
      [
        '#7 began testing on run r7',
        () => {
          move(7, 'testing');
          r7.createdAt = clock.now - 10;
          runs.push(verificationRunRow({ ...r7, status: 'inProgress', updatedAt: r7.createdAt }));
        },
        ['verification runs'],
      ],
      [
        '#7 restarted to pending, run r7 still in progress',
        moves([7, 'pending']),
        ['testing results', 'verification runs'],
      ],
      // Run r7 tests no PR in testing: it concludes at a poll that sees no change.
      ['nothing moved, run r7 still in progress', none, ['verification runs']],
      [
        'nothing moved, run r7 cancelled',
        () => {
          runs.splice(
            0,
            1,
            verificationRunRow({ ...r7, status: 'cancelled', updatedAt: clock.now - 5 }),
          );
        },
        ['verification runs'],
      ],
      ['nothing moved', none, []],
      [
        '#8 and #9 enqueued testing together on run rB',
        () => {
          rB.createdAt = clock.now - 10;
          for (const number of rB.tested) {
            rows.set(number, entryRow(number, 'testing', rB.createdAt));
            fake.entries(WEB_QUEUE).push(row(number));
          }
          runs.unshift(
            verificationRunRow({ ...rB, status: 'inProgress', updatedAt: rB.createdAt }),
          );
        },
        ['verification runs'],
      ],
      [
        '#8 failed out of testing, run rB still in progress',
        moves([8, 'failed']),
        ['concluded entries', 'testing results', 'verification runs'],
      ],
      // #9 is still in the stretch it was in on rB: its leaving `testing` will show rB's end.
      ['nothing moved, #9 testing on run rB', none, []],
      [
        '#9 restarted to pending as run rB failed',
        () => {
          move(9, 'pending');
          runs.splice(
            0,
            1,
            verificationRunRow({ ...rB, status: 'failed', updatedAt: clock.now - 10 }),
          );
        },
        ['testing results', 'verification runs'],
      ],
      ['nothing moved', none, []],
      // "The pull requests included in this run" may be none: no PR's leaving `testing` shows its end.
      [
        '#6 began testing on run r6 as run rE was created listing no PR',
        testing6On(r6, rE),
        ['verification runs'],
      ],
      ['nothing moved, run rE still in progress', none, ['verification runs']],
      ['nothing moved, run rE cancelled', cancel(rE), ['verification runs']],
      ['nothing moved, #6 testing on run r6', none, []],
      // A restart between the polls: #6 tests on a new run, and vouches for that one only.
      [
        '#6 testing again on run r6b since a restart, run r6 still in progress',
        testing6On(r6b),
        ['testing results', 'verification runs'],
      ],
      ['nothing moved, run r6 still in progress', none, ['verification runs']],
      ['nothing moved, run r6 cancelled', cancel(r6), ['verification runs']],
      ['nothing moved, #6 testing on run r6b', none, []],
    ];
    const seen: [string, Read[]][] = [];
    for (const [what, change] of scenario) {
      change();
      seen.push([what, await poll()]);
    }
    expect(seen).toEqual(scenario.map(([what, , reads]) => [what, reads]));
  });
});

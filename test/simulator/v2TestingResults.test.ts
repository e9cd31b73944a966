// GET /v2/merge-queues/{id}/testing-results: every stretch of testing the queue model recorded,
// once, in order, while the world moves between pages; outcomes as the queue's transitions say;
// the since/until window and its 45-day limit; a bounded history.
import { describe, expect, it } from 'vitest';
import type { PullRequestState } from '../../src/simulator/pullRequest.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import {
  createTestingHistory,
  TESTING_HISTORY_ATTEMPTS,
  type TestingAttempt,
  type TestingOutcome,
} from '../../src/simulator/testingHistory.js';
import { createSimulatorWorld } from '../../src/simulator/world.js';
import {
  renderTestingResult,
  type TestingResultV2Body,
} from '../../src/simulator/v2TestingResults.js';
import { errorOf, getPage, startV2Simulator, v2Request, walk } from './v2Harness.js';

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** A row as the wire carries it: the simulator's own body type. */
type Row = TestingResultV2Body;

/** The queue ids in world order. */
async function queueIds(simulator: RunningSimulator): Promise<string[]> {
  return (await getPage(simulator, '/v2/merge-queues')).data.map((row) => String(row.id));
}

/** What a row says of an attempt, as the model recorded it. */
function truthOf(attempt: TestingAttempt) {
  return {
    pullRequestNumber: attempt.pr.number,
    endedAt: iso(attempt.endedAt),
    testingDurationMs: (attempt.endedAt - attempt.startedAt) * 1000,
    isBisection: attempt.isBisection,
    startedBisection: attempt.startedBisection,
  };
}

describe('GET /v2/merge-queues/{id}/testing-results', () => {
  it('lists every stretch of testing of the window once, in order, while the world moves', async () => {
    const simulator = await startV2Simulator({ seed: 1 });
    const { world } = simulator;
    world.advance(world.now() + 3 * 3600);
    const ids = await queueIds(simulator);
    const since = world.now() - 2 * 3600;
    let seen = 0;
    for (const [index, { model }] of world.mergeQueues.entries()) {
      // The walk's first page is read now: its time is the window's end.
      const until = world.now();
      const truth = model.testing.attempts.filter(
        (attempt) => attempt.endedAt >= since && attempt.endedAt <= until,
      );
      // Ten simulated minutes pass between pages: rows that end meanwhile are after `until`,
      // which the first page fixed.
      const { rows } = await walk(
        simulator,
        `/v2/merge-queues/${String(ids[index])}/testing-results?since=${iso(since)}&limit=7`,
        () => {
          world.advance(world.now() + 600);
        },
      );
      expect(rows.map((row) => truthOf(rowAttempt(row)))).toEqual(truth.map(truthOf));
      for (const [at, row] of rows.entries()) {
        const attempt = truth[at];
        if (attempt === undefined) throw new Error('no attempt');
        const { outcome, entryConclusion } = row as unknown as Row;
        // Both absent when Trunk reports no classification; otherwise as the model recorded.
        if (outcome === undefined) expect(entryConclusion).toBeUndefined();
        else {
          expect(outcome).toBe(attempt.outcome);
          expect(entryConclusion).toBe(attempt.pr.conclusions[attempt.trip]?.state);
        }
        expect((row as unknown as Row).testingDurationMs % 1000).toBe(0);
      }
      seen += rows.length;
    }
    expect(seen).toBeGreaterThan(40);
  });

  it("records how each stretch of testing ended, as the queue's transitions say", () => {
    const world = createSimulatorWorld({ seed: 3 });
    const outcomeOf: Partial<Record<PullRequestState, TestingOutcome>> = {
      tests_passed: 'passed',
      pending_failure: 'failed',
      failed: 'failed',
      cancelled: 'cancelled',
    };
    const mismatches: string[] = [];
    let recordedAsTold = 0;
    world.subscribe((event) => {
      if (event.kind !== 'pull_request' || event.from !== 'testing') return;
      const queue = world.mergeQueues.find(
        ({ repository, model }) => repository === event.repository && model.branch === event.branch,
      );
      // Recorded as the pull request left testing, before the change is told.
      const attempt = queue?.model.testing.attempts.at(-1);
      const told = `${event.pr.number} testing->${event.pr.state}`;
      if (attempt === undefined || attempt.pr !== event.pr || attempt.endedAt !== event.at) {
        mismatches.push(`${told}: not recorded`);
        return;
      }
      // Back to pending is a restart, or the batch's bisection taking it out of testing.
      const expected = outcomeOf[event.pr.state] ?? 'interrupted';
      const bisected =
        event.pr.state === 'pending' &&
        attempt.outcome === 'failed' &&
        (queue?.model.testing.attempts ?? []).some(
          (other) =>
            other.batch === attempt.batch &&
            other.endedAt === attempt.endedAt &&
            other.startedBisection,
        );
      if (attempt.outcome !== expected && !bisected) {
        mismatches.push(`${told}: recorded ${attempt.outcome}`);
      } else recordedAsTold += 1;
    });
    const start = world.now();
    world.advance(start + 6 * 3600);
    expect(mismatches).toEqual([]);
    expect(recordedAsTold).toBeGreaterThan(100);
    const outcomes = new Set<string>();
    let bisections = 0;
    let bisectionSteps = 0;
    for (const { model } of world.mergeQueues) {
      const recorded = model.testing.attempts.filter((attempt) => attempt.endedAt > start);
      for (const attempt of recorded) outcomes.add(attempt.outcome);
      // One split per batch: "This failure caused the pull request's batch to be split" is true of
      // every pull request the failed run tested, so each of its rows says so.
      const splits = recorded.filter((attempt) => attempt.startedBisection);
      bisections += new Set(splits.map((attempt) => attempt.batch)).size;
      for (const split of splits) {
        const endedWithIt = recorded.filter(
          (attempt) => attempt.batch === split.batch && attempt.endedAt === split.endedAt,
        );
        expect(endedWithIt.length).toBeGreaterThan(1);
        expect(endedWithIt.every((attempt) => attempt.startedBisection)).toBe(true);
      }
      bisectionSteps += recorded.filter((attempt) => attempt.isBisection).length;
      // A bisection step follows a batch of the same pull request that was split, with no pass
      // of it since.
      const split = (batch: number) =>
        model.testing.attempts.some((other) => other.batch === batch && other.startedBisection);
      for (const attempt of recorded.filter((each) => each.isBisection)) {
        const before = model.testing.attempts.filter(
          (earlier) => earlier.pr === attempt.pr && earlier.endedAt <= attempt.startedAt,
        );
        const last = before.findLast(
          (earlier) => earlier.outcome === 'passed' || split(earlier.batch),
        );
        expect(last?.outcome).toBe('failed');
      }
    }
    expect([...outcomes].sort()).toEqual(['cancelled', 'failed', 'interrupted', 'passed']);
    expect(world.mergeQueues.some(({ model }) => model.settings.batch)).toBe(true);
    expect(bisections).toBeGreaterThan(0);
    expect(bisectionSteps).toBeGreaterThan(bisections);
  });

  it('gives every row of one run its verificationRunId, or none to all of them', async () => {
    // "Absent on results recorded before runs were tracked on them": a property of the run, so
    // the rows a batched run has ("once per pull request it tested") agree.
    // Seed 3: every queue batches.
    const simulator = await startV2Simulator({ seed: 3 });
    const { world } = simulator;
    world.advance(world.now() + 12 * 3600);
    const ids = await queueIds(simulator);
    let runsWithout = 0;
    let batchedRuns = 0;
    for (const [index, { model }] of world.mergeQueues.entries()) {
      const byRun = new Map<number, boolean[]>();
      for (const attempt of model.testing.attempts) {
        const row = renderTestingResult(String(ids[index]), attempt);
        byRun.set(attempt.batch, [
          ...(byRun.get(attempt.batch) ?? []),
          row.verificationRunId !== undefined,
        ]);
      }
      for (const withRun of byRun.values()) {
        expect(new Set(withRun).size).toBe(1);
        if (withRun.length > 1) batchedRuns += 1;
        if (withRun[0] === false) runsWithout += 1;
      }
    }
    expect(batchedRuns).toBeGreaterThan(10);
    expect(runsWithout).toBeGreaterThan(0);
  });

  it('takes a since/until window of at most 45 days; until defaults to the first page', async () => {
    const simulator = await startV2Simulator({ seed: 2 });
    const { world } = simulator;
    world.advance(world.now() + 2 * 3600);
    const [id] = await queueIds(simulator);
    const path = `/v2/merge-queues/${String(id)}/testing-results`;
    const [model] = world.mergeQueues.map((queue) => queue.model);
    const attempts = model?.testing.attempts ?? [];
    const middle = attempts[Math.floor(attempts.length / 2)];
    if (middle === undefined) throw new Error('no attempts');
    // Both bounds inclusive: a window of one instant holds the attempts that ended then.
    const instant = await walk(
      simulator,
      `${path}?since=${iso(middle.endedAt)}&until=${iso(middle.endedAt)}`,
    );
    expect(instant.rows.map((row) => row.endedAt)).toContain(iso(middle.endedAt));
    expect(new Set(instant.rows.map((row) => row.endedAt))).toEqual(new Set([iso(middle.endedAt)]));
    expect(instant.rows.length).toBe(
      attempts.filter((attempt) => attempt.endedAt === middle.endedAt).length,
    );
    const total = async (query: string) =>
      (await getPage(simulator, `${path}?${query}&includeTotal=true&limit=1`)).total;
    expect(await total(`since=${iso(world.now() - 45 * 86_400)}`)).toBe(attempts.length);
    expect(await total(`since=${iso(middle.endedAt)}&until=${iso(world.now() + 3600)}`)).toBe(
      attempts.filter((attempt) => attempt.endedAt >= middle.endedAt).length,
    );

    const refused = async (query: string, message: RegExp) => {
      const reply = await v2Request(simulator, `${path}${query}`);
      expect(reply.status, query).toBe(400);
      expect(errorOf(reply)?.code).toBe('VALIDATION_FAILED');
      expect(errorOf(reply)?.message).toMatch(message);
    };
    await refused('', /since is required/);
    await refused(`?since=${iso(world.now() - 45 * 86_400 - 1)}`, /at most 45 days/);
    await refused(
      `?since=${iso(middle.endedAt)}&until=${iso(middle.endedAt + 46 * 86_400)}`,
      /at most 45 days/,
    );
    await refused(`?since=${iso(world.now())}&until=${iso(world.now() - 60)}`, /is after until/);
    await refused('?since=yesterday', /since must be an ISO 8601 date-time/);
    await refused(`?since=${iso(world.now() - 60)}&until=tomorrow`, /until must be an ISO 8601/);

    const unknown = await v2Request(
      simulator,
      `/v2/merge-queues/mq_nope/testing-results?since=${iso(0)}`,
    );
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown)?.code).toBe('MERGE_QUEUE_NOT_FOUND');
    const first = await getPage(simulator, `${path}?since=${iso(world.now() - 3600)}&limit=1`);
    const moved = await v2Request(
      simulator,
      `${path}?since=${iso(world.now() - 7200)}&cursor=${encodeURIComponent(String(first.nextCursor))}`,
    );
    expect(errorOf(moved)?.code).toBe('INVALID_CURSOR');
  });
});

describe('the testing history', () => {
  it(`keeps the last ${TESTING_HISTORY_ATTEMPTS} attempts of a queue, and none older than 45 days`, () => {
    const world = createSimulatorWorld({ seed: 4 });
    const [queue] = world.mergeQueues;
    if (queue === undefined) throw new Error('no queue');
    const pr = queue.model.submit(world.now());
    const history = createTestingHistory(() => 0);
    const record = (endedAt: number) => {
      history.record(pr, { outcome: 'passed', startedBisection: false }, endedAt - 60, endedAt);
    };
    for (let at = 1; at <= TESTING_HISTORY_ATTEMPTS + 20; at++) record(at * 60);
    expect(history.attempts.length).toBe(TESTING_HISTORY_ATTEMPTS);
    expect(history.attempts[0]?.endedAt).toBe(21 * 60);
    record(46 * 86_400);
    expect(history.attempts.map((attempt) => attempt.endedAt)).toEqual([46 * 86_400]);
  });
});

/** The attempt a row stands for, read back from the row (for comparison with the model). */
function rowAttempt(row: Record<string, unknown>): TestingAttempt {
  const { pullRequestNumber, endedAt, testingDurationMs, isBisection, startedBisection } =
    row as unknown as Row;
  const ended = Date.parse(endedAt) / 1000;
  return {
    sequence: 0,
    pr: { number: pullRequestNumber } as TestingAttempt['pr'],
    trip: 0,
    startedAt: ended - testingDurationMs / 1000,
    endedAt: ended,
    outcome: 'passed',
    batch: 0,
    isBisection,
    startedBisection,
  };
}

// Scripted scenarios of one quiet queue (no arrivals of its own, draining so it starts nothing by
// itself), read through v2's verification runs, testing results and queue-entry history: every
// expected state, reason and run below is written by hand from the script and the definition.
import { describe, expect, it } from 'vitest';
import type { SimulatedPullRequest } from '../../src/simulator/pullRequest.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { createSimulatorWorld, type SimulatorWorld } from '../../src/simulator/world.js';
import { getOne, getPage, startV2Simulator, walk } from './v2Harness.js';

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** One repository, one queue kept at zero pull requests of its own: only the script's move. */
const SOLO = {
  host: 'github.com',
  owner: 'acme',
  name: 'solo',
  branches: ['main'],
  pullRequestsPerQueue: 0,
} as const;

/** A quiet world of `seed`: its queue, the script's time origin and a simulator serving it. */
async function quietQueue(seed: number) {
  const world = createSimulatorWorld({ seed, repositories: [SOLO], warmUpSeconds: 0 });
  const queue = world.mergeQueues[0]?.model;
  if (queue === undefined) throw new Error('no queue');
  const t0 = world.now();
  // Draining starts nothing new: only the script starts testing.
  queue.holdState('draining', t0, t0 + 6 * 3600);
  const simulator = await startV2Simulator({ world });
  const queueId = String((await getPage(simulator, '/v2/merge-queues')).data[0]?.id);
  /** A pull request submitted at `now`, its readiness met so it turns pending at the next step. */
  const submitReady = (now: number): SimulatedPullRequest => {
    const pr = queue.submit(now);
    Object.assign(pr.readiness, {
      doesBaseBranchMatch: true,
      mergeability: 'mergeable',
      hasImpactedTargets: true,
    });
    return pr;
  };
  return { world, queue, t0, simulator, queueId, submitReady };
}

/** Each transition's state, time (seconds after `t0`), reason and run, as rows to compare. */
async function timelineOf(simulator: RunningSimulator, pr: SimulatedPullRequest, t0: number) {
  const { rows } = await walk(simulator, `/v2/pull-requests/${pr.id}/queue-entry-history?limit=3`);
  return rows.map((row) => [
    row.state,
    Date.parse(String(row.changedAt)) / 1000 - t0,
    row.reason,
    row.verificationRunId ?? '-',
  ]);
}

const ids = (refs: unknown) =>
  (refs as { pullRequestId: string }[]).map((ref) => ref.pullRequestId);

/** Moves the world to `at`, one step at a time (a scripted call comes after the step at `at`). */
function moveTo(world: SimulatorWorld, at: number): void {
  world.advance(at);
  expect(world.now()).toBe(at);
}

describe('a batch of three failing on a required e2e check, bisected', () => {
  it('shows the runs, their statuses, and each entry’s transitions and reasons', async () => {
    // Seed 4: its queue batches in single mode, the three authors are people, and Trunk bisects
    // the failed batch (the scenario's preconditions, checked where they can be).
    const { world, queue, t0, simulator, queueId, submitReady } = await quietQueue(4);
    expect(queue.settings).toMatchObject({ batch: true, mode: 'single' });
    queue.failRequiredCheck('e2e', t0 + 600);
    const [a, b, c] = [submitReady(t0), submitReady(t0), submitReady(t0)];
    expect(queue.active).toEqual([a, b, c]);
    for (const pr of [a, b, c]) expect(pr.author).not.toMatch(/\[bot\]$/);
    moveTo(world, t0 + 10);
    queue.testNow([a, b, c], t0 + 10, 300, true);
    moveTo(world, t0 + 315);
    queue.fail(a, t0 + 315);
    moveTo(world, t0 + 320);
    queue.testNow([b, c], t0 + 320, 300, true);
    moveTo(world, t0 + 1800);

    // "Lists the queue's verification runs, newest first."
    const runs = (await getPage(simulator, `/v2/merge-queues/${queueId}/verification-runs`)).data;
    expect(
      runs.map((run) => (run.testedPullRequests as { id: string }[]).map((pr) => pr.id)),
    ).toEqual([
      [b.id, c.id],
      [a.id, b.id, c.id],
    ]);
    const [second, first] = runs;
    if (first === undefined || second === undefined) throw new Error('two runs expected');
    // "`failed` — a required check failed"; "`succeeded` — every required check passed".
    expect(first).toMatchObject({
      status: 'failed',
      isBisection: false,
      createdAt: iso(t0 + 10),
      updatedAt: iso(t0 + 310),
    });
    // "True when this run exists to attribute a failed batch to a specific entry".
    expect(second).toMatchObject({
      status: 'succeeded',
      isBisection: true,
      createdAt: iso(t0 + 320),
      updatedAt: iso(t0 + 620),
    });
    // "A check in `checks` is required iff its `name` is in this list": e2e was made required.
    for (const run of [first, second]) expect(run.requiredStatuses).toContain('e2e');
    const required = (run: Record<string, unknown>) =>
      (run.checks as { name: string; conclusion: string }[])
        .filter((check) => (run.requiredStatuses as string[]).includes(check.name))
        .map((check) => `${check.name}:${check.conclusion}`);
    const names = first.requiredStatuses as string[];
    expect(required(first).sort()).toEqual(
      names.map((name) => `${name}:${name === 'e2e' ? 'failure' : 'success'}`).sort(),
    );
    expect(required(second).sort()).toEqual(names.map((name) => `${name}:success`).sort());

    const run1 = String(first.id);
    const run2 = String(second.id);
    expect(await timelineOf(simulator, a, t0)).toEqual([
      ['notReady', 0, 'USER_REQUESTED', '-'],
      ['pending', 5, 'MERGE_ITEM_NOW_READY', '-'],
      ['testing', 10, null, run1],
      ['pendingFailure', 310, null, run1],
      ['failed', 315, 'TEST_RUN_REQUIRED_STATUS_FAILED', run1],
    ]);
    const passedAfterBisection = [
      ['notReady', 0, 'USER_REQUESTED', '-'],
      ['pending', 5, 'MERGE_ITEM_NOW_READY', '-'],
      ['testing', 10, null, run1],
      ['pending', 310, 'BISECTION_REQUIRED', '-'],
      ['testing', 320, null, run2],
      ['testsPassed', 620, 'TEST_RUN_PASSED', run2],
    ];
    for (const pr of [b, c]) {
      const timeline = await timelineOf(simulator, pr, t0);
      expect(timeline.slice(0, -1)).toEqual(passedAfterBisection);
      // It merged later, when the queue got to it.
      expect(timeline.at(-1)?.slice(0, 1)).toEqual(['merged']);
      expect(timeline.at(-1)?.[1]).toBeGreaterThan(620);
      expect(timeline.at(-1)?.[2]).toBe('MERGE_GRAPH_MERGE');
    }

    // The particulars of each state, as the definition describes them.
    const history = async (pr: SimulatedPullRequest) =>
      (await walk(simulator, `/v2/pull-requests/${pr.id}/queue-entry-history`)).rows;
    const [, , , pendingFailure, failed] = await history(a);
    expect(pendingFailure?.pendingFailure).toMatchObject({
      eventualFailureReason: 'TEST_RUN_REQUIRED_STATUS_FAILED',
      waitingFor: [],
      failureCausingChecks: [{ name: 'e2e' }],
    });
    expect(failed?.failed).toMatchObject({ failureCausingChecks: [{ name: 'e2e' }] });
    const ofB = await history(b);
    const ofC = await history(c);
    // "The entries ahead of this one that it was queued behind, oldest-enqueued first."
    expect(ids((ofB[1]?.pending as Record<string, unknown>).prerequisitePullRequests)).toEqual([
      a.id,
    ]);
    expect(ids((ofC[1]?.pending as Record<string, unknown>).prerequisitePullRequests)).toEqual([
      a.id,
      b.id,
    ]);
    expect(ids((ofC[3]?.pending as Record<string, unknown>).prerequisitePullRequests)).toEqual([
      a.id,
      b.id,
    ]);
    // "How many entries the verifying run tested together"; "Present when the pass was
    // established by a bisection run"; "Entries ahead of this one that had to merge before it".
    expect(ofB[5]?.testsPassed).toMatchObject({ batchSize: 2, waitingFor: [] });
    expect(ids((ofB[5]?.testsPassed as Record<string, unknown>).otherTestedPullRequests)).toEqual([
      c.id,
    ]);
    expect(ids((ofC[5]?.testsPassed as Record<string, unknown>).waitingFor)).toEqual([b.id]);
    expect((ofB[5]?.testsPassed as Record<string, unknown>).bisectionId).toBe(
      (ofC[5]?.testsPassed as Record<string, unknown>).bisectionId,
    );

    // The testing results name the same runs: "The run this testing belongs to".
    const results = (
      await walk(simulator, `/v2/merge-queues/${queueId}/testing-results?since=${iso(t0)}`)
    ).rows.slice(0, 5);
    expect(results.map((row) => [row.pullRequestNumber, row.verificationRunId])).toEqual([
      [a.number, run1],
      [b.number, run1],
      [c.number, run1],
      [b.number, run2],
      [c.number, run2],
    ]);
    // `outcome` is "absent when Trunk reports no classification".
    for (const [index, outcome] of ['failed', 'failed', 'failed', 'passed', 'passed'].entries()) {
      expect([undefined, outcome]).toContain(results[index]?.outcome);
    }
    // "including a run it shared with others, which is reported here for each pull request".
    const ofPullRequest = await getPage(simulator, `/v2/pull-requests/${b.id}/verification-runs`);
    expect(ofPullRequest.data.map((run) => run.id)).toEqual([run2, run1]);
    expect(await getOne(simulator, `/v2/merge-queue-verification-runs/${run1}`)).toEqual(first);
  });
});

describe('restarts', () => {
  it('by a failure ahead and by pushes to the target branch, their runs abandoned', async () => {
    const { world, queue, t0, simulator, queueId, submitReady } = await quietQueue(4);
    expect(queue.settings.mode).toBe('single');
    const [a, b, c] = [submitReady(t0), submitReady(t0), submitReady(t0)];
    expect(queue.active).toEqual([a, b, c]);
    moveTo(world, t0 + 10);
    queue.testNow([a], t0 + 10, 100, false);
    queue.testNow([b], t0 + 10, 900, true);
    queue.testNow([c], t0 + 10, 900, true);
    moveTo(world, t0 + 115);
    // A failed at 110 and waits in pendingFailure; it fails out now, and in single mode what was
    // tested on top of it restarts.
    queue.fail(a, t0 + 115);
    moveTo(world, t0 + 120);
    queue.testNow([b, c], t0 + 120, 900, true);
    moveTo(world, t0 + 200);
    queue.pushToTargetBranch(t0 + 200);
    moveTo(world, t0 + 300);

    const reasonsAt = async (pr: SimulatedPullRequest) =>
      (await timelineOf(simulator, pr, t0)).map(([state, at, reason]) => [state, at, reason]);
    for (const pr of [b, c]) {
      expect(await reasonsAt(pr)).toEqual([
        ['notReady', 0, 'USER_REQUESTED'],
        ['pending', 5, 'MERGE_ITEM_NOW_READY'],
        ['testing', 10, null],
        // "An entry ahead of this one failed, so this one must re-test."
        ['pending', 115, 'PREREQUISITE_MERGE_ITEM_FAILED'],
        ['testing', 120, null],
        // "Someone pushed to the target branch, invalidating the tested state."
        ['pending', 200, 'MANUAL_PUSH_TO_TARGET_BRANCH'],
      ]);
      const restart = (await walk(simulator, `/v2/pull-requests/${pr.id}/queue-entry-history`))
        .rows[3];
      // "For a PREREQUISITE_* reason, the pull request ahead … always one of
      // pending.prerequisitePullRequests".
      expect(restart?.prerequisitePullRequestId).toBe(a.id);
      expect(ids((restart?.pending as Record<string, unknown>).prerequisitePullRequests)).toContain(
        a.id,
      );
    }
    // "`cancelled` — the engine abandoned the run, typically because the entry left the queue or
    // an entry ahead of it failed."
    const runs = (await getPage(simulator, `/v2/merge-queues/${queueId}/verification-runs`)).data;
    expect(
      runs.map((run) => [
        (run.testedPullRequests as { number: number }[]).map((pr) => pr.number),
        run.status,
      ]),
    ).toEqual([
      [[b.number, c.number], 'cancelled'],
      [[c.number], 'cancelled'],
      [[b.number], 'cancelled'],
      [[a.number], 'failed'],
    ]);
  });
});

// GET /v2/merge-queues/{id}/pull-requests: the queue's entries, agreeing with v1's getQueue and
// getSubmittedPullRequest for the same world; state, author and conclusion-window filters.
import { describe, expect, it } from 'vitest';
import { MERGEABILITY_REASON_CODES } from '../../src/simulator/v2Mergeability.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { QUEUE_SHAPES, SUBMITTED_SHAPES } from './documentedShapes.js';
import { post } from './harness.js';
import { errorOf, getPage, startV2Simulator, v2Request, walk } from './v2Harness.js';

const LIVE = 'state=notReady,pending,testing,testsPassed,pendingFailure';
const EXITS = 'state=merged,failed,cancelled';
const V1_STATES: Record<string, string> = {
  not_ready: 'notReady',
  pending: 'pending',
  testing: 'testing',
  tests_passed: 'testsPassed',
  pending_failure: 'pendingFailure',
  merged: 'merged',
  failed: 'failed',
  cancelled: 'cancelled',
};
const MERGEABILITY: Record<string, string> = {
  mergeable: 'mergeable',
  not_mergeable: 'notMergeable',
  in_progress: 'inProgress',
  unspecified: 'unspecified',
};

interface Entry {
  readonly id: string;
  readonly state: string;
  readonly stateChangedAt: string;
  readonly createdAt: string;
  readonly skipsTheLine: boolean;
  readonly allowBatching: boolean;
  readonly direct: boolean;
  readonly priorityName?: string;
  readonly priorityValue?: number;
  readonly readiness: {
    readonly mergeability: string;
    readonly doesBaseBranchMatch: boolean;
    readonly requiresImpactedTargets: boolean;
    readonly mergeabilityDetails?: { provider: string; reasons: { code: string }[] };
  };
}
const entryOf = (row: Record<string, unknown>) => row.queueEntry as Entry;
const camel = (state: string) => V1_STATES[state] ?? state;

/** Ids of the four queues, in world order. */
async function queueIds(simulator: RunningSimulator): Promise<string[]> {
  return (await getPage(simulator, '/v2/merge-queues')).data.map((row) => String(row.id));
}

describe('GET /v2/merge-queues/{id}/pull-requests', () => {
  it('shows the PRs v1 shows, in the same states, newest submission first', async () => {
    const simulator = await startV2Simulator({ seed: 8, flavour: 'live' });
    const ids = await queueIds(simulator);
    // One PR still waiting for the host's answer and one it refused, whatever the seed drew.
    const [first] = simulator.world.mergeQueues;
    const now = simulator.world.now();
    const waiting = first?.model.submit(now);
    const refused = first?.model.submit(now);
    if (waiting === undefined || refused === undefined) throw new Error('no queue');
    waiting.readiness.mergeability = 'in_progress';
    refused.readiness.mergeability = 'not_mergeable';
    let notMergeable = 0;
    let inProgress = 0;
    for (const [index, { repository, model }] of simulator.world.mergeQueues.entries()) {
      const repo = { host: repository.host, owner: repository.owner, name: repository.name };
      const { rows } = await walk(
        simulator,
        `/v2/merge-queues/${ids[index]}/pull-requests?${LIVE}&limit=3`,
      );
      const v1 = QUEUE_SHAPES.live.parse(
        (await post(simulator, '/getQueue', { repo, targetBranch: model.branch })).json,
      );
      expect(rows.map((row) => row.number).sort()).toEqual(
        v1.enqueuedPullRequests.map((pr) => pr.prNumber).sort(),
      );
      const submitted = rows.map((row) => Date.parse(entryOf(row).createdAt));
      expect(submitted).toEqual([...submitted].sort((a, b) => b - a));
      for (const row of rows) {
        const reply = await post(simulator, '/getSubmittedPullRequest', {
          repo,
          targetBranch: model.branch,
          pr: { number: row.number },
        });
        const pr = SUBMITTED_SHAPES.live.parse(reply.json);
        const entry = entryOf(row);
        expect(row).toMatchObject({
          id: pr.id,
          title: pr.prTitle,
          sha: pr.prSha,
          author: pr.prAuthor,
        });
        expect(row.isCurrentlySubmittedToQueue).toBe(true);
        expect(entry.state).toBe(V1_STATES[pr.state]);
        expect(entry.stateChangedAt).toBe(pr.stateChangedAt);
        expect(entry).toMatchObject({ skipsTheLine: pr.skipTheLine, direct: pr.forceEnqueued });
        // Either priority field may be absent on its own (the definition), never both.
        expect(entry.priorityName ?? pr.priorityName).toBe(pr.priorityName);
        expect(entry.priorityValue ?? pr.priorityValue).toBe(pr.priorityValue);
        expect(entry.priorityName !== undefined || entry.priorityValue !== undefined).toBe(true);
        expect(entry.id).not.toBe(row.id);
        expect(entry.readiness.mergeability).toBe(MERGEABILITY[pr.readiness.gitHubMergeability]);
        expect(entry.readiness.doesBaseBranchMatch).toBe(pr.readiness.doesBaseBranchMatch);
        const details = entry.readiness.mergeabilityDetails;
        if (entry.readiness.mergeability === 'notMergeable') {
          notMergeable += 1;
          // Absent now and then: Trunk recorded no structured reasons.
          if (details !== undefined) {
            expect(details.provider).toBe('github');
            expect(details.reasons.length).toBeGreaterThan(0);
          }
          for (const reason of details?.reasons ?? []) {
            expect(MERGEABILITY_REASON_CODES).toContain(reason.code);
          }
        } else {
          if (entry.readiness.mergeability === 'inProgress') inProgress += 1;
          expect(details).toBeUndefined();
        }
      }
    }
    expect(notMergeable).toBeGreaterThan(0);
    expect(inProgress).toBeGreaterThan(0);
  });

  it('filters by state and author, and refuses an unknown state', async () => {
    const simulator = await startV2Simulator({ seed: 9 });
    const [id] = await queueIds(simulator);
    const path = `/v2/merge-queues/${String(id)}/pull-requests`;
    const { rows: all } = await walk(simulator, `${path}?limit=100`);
    const testing = await getPage(simulator, `${path}?state=testing,pending&limit=100`);
    expect(testing.data.map((row) => row.number)).toEqual(
      all
        .filter((row) => ['testing', 'pending'].includes(entryOf(row).state))
        .map((row) => row.number),
    );
    const author = String(all[0]?.author);
    const byAuthor = await getPage(
      simulator,
      `${path}?author=${encodeURIComponent(author)}&limit=100`,
    );
    expect(byAuthor.data.length).toBeGreaterThan(0);
    expect(byAuthor.data.every((row) => row.author === author)).toBe(true);

    const bad = await v2Request(simulator, `${path}?state=testing,not_ready`);
    expect(bad.status).toBe(400);
    expect(errorOf(bad)?.code).toBe('VALIDATION_FAILED');
    expect(errorOf(bad)?.message).toContain('"not_ready"');
  });

  it('lists exactly the exits of a window, with inclusive bounds', async () => {
    const simulator = await startV2Simulator({ seed: 10 });
    const { world } = simulator;
    const ids = await queueIds(simulator);
    const start = world.now();
    // Each queue's PRs that concluded in the window, by number, and how they are now: a PR that
    // failed and was resubmitted is in the window, though no longer in a final state.
    const exits = new Map<string, Map<number, string>>();
    world.subscribe((event) => {
      if (event.kind !== 'pull_request') return;
      const queueId = String(
        ids[
          world.mergeQueues.findIndex(
            (queue) => queue.model.branch === event.branch && queue.repository === event.repository,
          )
        ],
      );
      const ofQueue = exits.get(queueId) ?? new Map<number, string>();
      exits.set(queueId, ofQueue);
      const concluded = ['merged', 'failed', 'cancelled'].includes(event.pr.state);
      if (concluded || ofQueue.has(event.pr.number)) ofQueue.set(event.pr.number, event.pr.state);
    });
    // One failure resubmitted for sure, whatever the seed drew.
    const [first] = world.mergeQueues;
    world.advance(start + 10);
    const again = first?.model.submit(world.now());
    if (first === undefined || again === undefined) throw new Error('no queue');
    first.model.fail(again, world.now());
    world.advance(start + 60);
    first.model.resubmit(again, world.now());
    world.advance(start + 3600);
    const after = new Date((start + 5) * 1000).toISOString();
    let seen = 0;
    const windowNumbers = new Set<number>();
    for (const id of ids) {
      const { rows } = await walk(
        simulator,
        `/v2/merge-queues/${id}/pull-requests?${EXITS}&concludedAfter=${after}&limit=7`,
      );
      const concluded = [...(exits.get(id) ?? new Map<number, string>())];
      const final = (state: string) => ['merged', 'failed', 'cancelled'].includes(state);
      expect(rows.map((row) => `${String(row.number)}:${entryOf(row).state}`).sort()).toEqual(
        concluded
          .filter(([, state]) => final(state))
          .map(([pr, state]) => `${pr}:${state}`)
          .sort(),
      );
      expect(rows.every((row) => row.isCurrentlySubmittedToQueue === false)).toBe(true);
      // The window alone already means exits, resubmitted ones too: the state filter narrows.
      const { rows: windowOnly } = await walk(
        simulator,
        `/v2/merge-queues/${id}/pull-requests?concludedAfter=${after}&limit=100`,
      );
      expect(windowOnly.map((row) => `${String(row.number)}:${entryOf(row).state}`).sort()).toEqual(
        concluded.map(([pr, state]) => `${pr}:${camel(state)}`).sort(),
      );
      for (const row of windowOnly) windowNumbers.add(Number(row.number));
      seen += rows.length;
      // Both bounds are inclusive: a window of one instant holds the exits of that instant.
      for (const row of rows.slice(0, 3)) {
        const at = entryOf(row).stateChangedAt;
        const instant = await getPage(
          simulator,
          `/v2/merge-queues/${id}/pull-requests?concludedAfter=${at}&concludedBefore=${at}&limit=100`,
        );
        expect(instant.data.map((other) => other.number)).toContain(row.number);
        expect(instant.data.every((other) => entryOf(other).stateChangedAt === at)).toBe(true);
        expect(instant.data.every((other) => other.isCurrentlySubmittedToQueue === false)).toBe(
          true,
        );
      }
    }
    expect(seen).toBeGreaterThan(3);
    // The failure stays in the window after the resubmission (the entry is reused).
    expect(again.conclusions[0]?.state).toBe('failed');
    expect(windowNumbers).toContain(again.number);
    const later = new Date((world.now() + 5) * 1000).toISOString();
    expect(
      (
        await getPage(
          simulator,
          `/v2/merge-queues/${String(ids[0])}/pull-requests?concludedAfter=${later}`,
        )
      ).data,
    ).toEqual([]);

    const bad = await v2Request(
      simulator,
      `/v2/merge-queues/${String(ids[0])}/pull-requests?concludedAfter=yesterday`,
    );
    expect(bad.status).toBe(400);
    expect(errorOf(bad)?.message).toContain('concludedAfter');
  });

  it('remembers a bounded number of exits per queue', async () => {
    const simulator = await startV2Simulator({ seed: 11 });
    const [id] = await queueIds(simulator);
    const [queue] = simulator.world.mergeQueues;
    if (queue === undefined) throw new Error('no queue');
    for (let i = 0; i < 400; i++) {
      const pr = queue.model.submit(simulator.world.now());
      queue.model.fail(pr, simulator.world.now());
    }
    const exits = await getPage(
      simulator,
      `/v2/merge-queues/${String(id)}/pull-requests?${EXITS}&includeTotal=true`,
    );
    expect(exits.total).toBe(200);
  });
});

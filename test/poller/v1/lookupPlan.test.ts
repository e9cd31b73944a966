// The lookup economy of merge-queue polls: a scripted queue behind a real node:http fake, polled by
// pollMergeQueue over the real TrunkClient with a lookup memory and a test clock. Counts are exact
// (requests the fake received), and the snapshot must stay as true as a poll that looks up every PR.
import { afterEach, describe, expect, it } from 'vitest';
import {
  PullRequestLookupMemory,
  isRecheckDue,
  planLookups,
  rememberLookups,
} from '../../../src/poller/v1/lookupPlan.js';
import { pollMergeQueue } from '../../../src/poller/v1/mergeQueuePoll.js';
import type { MergeQueueSnapshot } from '../../../src/snapshot/types.js';
import type { EnqueuedPullRequest, SubmittedPullRequest } from '../../../src/trunk/schemas.js';
import { queueResponse } from '../../trunk/fixtures.js';
import {
  REPO,
  cleanUp,
  makeClient,
  sendJson,
  sendText,
  startApiServer,
} from '../../trunk/harness.js';

afterEach(cleanUp);

const INTERVAL = 30;
const LOOKUP_PATH = '/v1/getSubmittedPullRequest';

interface ScriptedPullRequest {
  state: string;
  stateChangedAt: string;
  sha: string;
  readiness: { doesBaseBranchMatch: boolean; hostMergeability: string };
  /** Answer 404 to a lookup, as for a PR that left between the two calls. */
  gone?: boolean;
}

/** A queue the test edits between polls, behind a real HTTP server. */
async function scriptedQueue(shape: 'documented' | 'live') {
  const pullRequests = new Map<number, ScriptedPullRequest>();
  const lookedUp: number[] = [];
  let failLookups = false;
  const server = await startApiServer((req, res, _index, recorded) => {
    const body = JSON.parse(recorded.body) as { pr?: { number: number } };
    if (req.url === '/v1/getQueue') {
      const queue = queueResponse();
      queue.enqueuedPullRequests = [...pullRequests].map(([number, pr]) => ({
        stateChangedAt: pr.stateChangedAt,
        priorityValue: 100,
        priorityName: 'medium',
        skipTheLine: false,
        noBatch: false,
        prNumber: number,
        prTitle: `Change ${number}`,
        prSha: pr.sha,
        prBaseBranch: 'main',
        prAuthor: 'alice',
        id: `id-${number}`,
        ...(shape === 'live' ? { state: pr.state } : {}),
      }));
      sendJson(res, 200, queue);
      return;
    }
    const number = body.pr?.number ?? -1;
    lookedUp.push(number);
    const pr = pullRequests.get(number);
    if (failLookups) {
      sendText(res, 400, 'scripted failure');
      return;
    }
    if (pr === undefined || pr.gone === true) {
      sendText(res, 404, 'not found');
      return;
    }
    sendJson(res, 200, {
      stateChangedAt: pr.stateChangedAt,
      priorityValue: 100,
      priorityName: 'medium',
      skipTheLine: false,
      forceEnqueued: false,
      isCurrentlySubmittedToQueue: true,
      prNumber: number,
      prTitle: `Change ${number}`,
      prSha: pr.sha,
      prBaseBranch: 'main',
      prAuthor: 'alice',
      state: pr.state,
      readiness: { requiresImpactedTargets: false, hasImpactedTargets: false, ...pr.readiness },
    });
  });
  const { client } = makeClient(server.apiUrl);
  return {
    pullRequests,
    setFailLookups: (value: boolean) => (failLookups = value),
    /** PR numbers looked up since the last call. */
    takeLookups: () => lookedUp.splice(0).sort((a, b) => a - b),
    lookupRequests: () => server.requests.filter((r) => r.url === LOOKUP_PATH).length,
    queueRequests: () => server.requests.filter((r) => r.url === '/v1/getQueue').length,
    poll: (memory: PullRequestLookupMemory, now: number) =>
      pollMergeQueue({
        reader: client,
        repo: REPO,
        repoName: 'github.com/acme/web',
        branch: 'main',
        pullRequestDetails: true,
        lookupMemory: memory,
        options: {},
        now: () => now,
      }),
  };
}

function pullRequest(state: string, at: number, sha = 'aaa'): ScriptedPullRequest {
  return {
    state,
    stateChangedAt: new Date(Date.UTC(2026, 0, 1) + at * 1000).toISOString(),
    sha,
    readiness: { doesBaseBranchMatch: false, hostMergeability: 'mergeable' },
  };
}

function states(snapshot: MergeQueueSnapshot): Record<number, string> {
  return Object.fromEntries(snapshot.pullRequests.map((pr) => [pr.number, pr.state]));
}

describe('merge-queue polls with a lookup memory', () => {
  it('looks up only new and changed PRs (documented shape: no state in queue items)', async () => {
    const api = await scriptedQueue('documented');
    // A recheck interval far beyond the script, so only changes cause lookups here.
    const memory = new PullRequestLookupMemory(10 * 365 * 86400, 'queue-a');
    api.pullRequests.set(1, pullRequest('testing', -600));
    api.pullRequests.set(2, pullRequest('pending', -300));
    api.pullRequests.set(3, pullRequest('not_ready', -60));

    let snapshot = await api.poll(memory, 0);
    expect(api.takeLookups()).toEqual([1, 2, 3]);
    expect(states(snapshot)).toEqual({ 1: 'testing', 2: 'pending', 3: 'not_ready' });

    snapshot = await api.poll(memory, 30);
    expect(api.takeLookups()).toEqual([]);
    // Unchanged PRs keep their looked-up state and readiness.
    expect(states(snapshot)).toEqual({ 1: 'testing', 2: 'pending', 3: 'not_ready' });
    expect(snapshot.pullRequests.find((pr) => pr.number === 3)?.blockedReasons).toEqual([
      'base_branch_mismatch',
    ]);

    api.pullRequests.set(2, pullRequest('testing', 55));
    api.pullRequests.set(4, pullRequest('not_ready', 50));
    snapshot = await api.poll(memory, 60);
    expect(api.takeLookups()).toEqual([2, 4]);
    expect(states(snapshot)).toEqual({
      1: 'testing',
      2: 'testing',
      3: 'not_ready',
      4: 'not_ready',
    });

    // Merged PR 1 leaves; PR 4 is force-pushed (new sha, same stateChangedAt).
    api.pullRequests.delete(1);
    api.pullRequests.set(4, pullRequest('not_ready', 50, 'bbb'));
    snapshot = await api.poll(memory, 90);
    expect(api.takeLookups()).toEqual([4]);
    expect(states(snapshot)).toEqual({ 2: 'testing', 3: 'not_ready', 4: 'not_ready' });

    // PR 5 leaves between getQueue and its lookup: dropped from the snapshot, not remembered.
    api.pullRequests.set(5, { ...pullRequest('pending', 100), gone: true });
    snapshot = await api.poll(memory, 120);
    expect(api.takeLookups()).toEqual([5]);
    expect(states(snapshot)).toEqual({ 2: 'testing', 3: 'not_ready', 4: 'not_ready' });
    api.pullRequests.delete(5);

    // A poll whose lookups fail leaves the memory as it was: the next poll retries those lookups.
    api.pullRequests.set(3, pullRequest('pending', 140));
    api.setFailLookups(true);
    await expect(api.poll(memory, 150)).rejects.toThrow(/HTTP 400/);
    expect(api.takeLookups()).toEqual([3]);
    api.setFailLookups(false);
    snapshot = await api.poll(memory, 180);
    expect(api.takeLookups()).toEqual([3]);
    expect(states(snapshot)).toEqual({ 2: 'testing', 3: 'pending', 4: 'not_ready' });

    // 7 polls: 9 lookups (one failed and was repeated) where one per enqueued PR would be 23.
    expect(api.queueRequests()).toBe(7);
    expect(api.lookupRequests()).toBe(9);
  });

  it('never looks up a PR whose queue item carries a state other than not_ready (live shape)', async () => {
    const api = await scriptedQueue('live');
    const memory = new PullRequestLookupMemory(10 * 365 * 86400, 'queue-b');
    api.pullRequests.set(1, pullRequest('testing', -600));
    api.pullRequests.set(2, pullRequest('not_ready', -60));
    await api.poll(memory, 0);
    expect(api.takeLookups()).toEqual([2]);
    await api.poll(memory, 30);
    expect(api.takeLookups()).toEqual([]);
    // Once its item says another state, no lookup is needed at all: the state is in the item.
    api.pullRequests.set(2, { ...pullRequest('not_ready', -60), state: 'pending' });
    const snapshot = await api.poll(memory, 60);
    expect(api.takeLookups()).toEqual([]);
    expect(states(snapshot)).toEqual({ 1: 'testing', 2: 'pending' });
    api.pullRequests.set(2, pullRequest('not_ready', 70));
    await api.poll(memory, 90);
    expect(api.takeLookups()).toEqual([2]);
  });

  it('sees a readiness change of an unchanged PR within one recheck interval', async () => {
    const api = await scriptedQueue('documented');
    const recheckSeconds = 120;
    const memory = new PullRequestLookupMemory(recheckSeconds, 'queue-c');
    api.pullRequests.set(7, pullRequest('not_ready', -60));
    await api.poll(memory, 0);
    api.takeLookups();

    // Readiness changes at t=45; state and stateChangedAt do not.
    const changedAt = 45;
    let seenAt: number | undefined;
    let lookupsAfterChange = 0;
    for (let now = INTERVAL; now <= 600; now += INTERVAL) {
      if (now > changedAt) {
        const pr = api.pullRequests.get(7);
        if (pr) pr.readiness = { doesBaseBranchMatch: true, hostMergeability: 'not_mergeable' };
      }
      const snapshot = await api.poll(memory, now);
      lookupsAfterChange += api.takeLookups().length;
      const reasons = snapshot.pullRequests[0]?.blockedReasons ?? [];
      if (seenAt === undefined && reasons.includes('not_mergeable')) seenAt = now;
    }
    expect(seenAt).toBeDefined();
    // At the first poll after the PR's first recheck point past the change.
    expect((seenAt ?? Infinity) - changedAt).toBeLessThanOrEqual(recheckSeconds + INTERVAL);
    // One recheck per 120 s over (0, 600]: exactly 5, whatever the PR's phase.
    expect(lookupsAfterChange).toBe(5);
  });
});

describe('recheck spreading', () => {
  const item = (prNumber: number): EnqueuedPullRequest => ({
    stateChangedAt: '2026-01-01T00:00:00Z',
    priorityName: 'medium',
    prNumber,
    prSha: 's',
  });
  const detail = { state: 'testing' } as SubmittedPullRequest;

  it('remembers only the state and readiness of an answer, not its title, author or ids', () => {
    const items = [item(7)];
    const options = { recheckSeconds: 120, phaseSeed: 'merge_queue github.com/acme/web main' };
    // As a looser schema would hand it over: the memory must keep none of the extras.
    const answer: SubmittedPullRequest & Record<string, unknown> = {
      stateChangedAt: '2026-01-01T00:00:00Z',
      priorityValue: 100,
      priorityName: 'medium',
      skipTheLine: false,
      forceEnqueued: false,
      isCurrentlySubmittedToQueue: true,
      prNumber: 7,
      prTitle: 'A long title that nothing reads after the poll',
      prSha: 's',
      prBaseBranch: 'main',
      prAuthor: 'a',
      id: 'id-7',
      state: 'not_ready',
      readiness: { doesBaseBranchMatch: false },
    };
    const memory = rememberLookups(
      planLookups(items, new Map(), { ...options, now: 0 }),
      new Map([[7, answer]]),
      new Map(),
      0,
    );
    const reused = planLookups(items, memory, { ...options, now: 1 }).reuse.get(7);
    expect(reused).toEqual({ state: 'not_ready', readiness: { doesBaseBranchMatch: false } });
  });

  it('rechecks each unchanged PR once per interval, spread over the polls of that interval', () => {
    const items = Array.from({ length: 40 }, (_, index) => item(1000 + index));
    const options = { recheckSeconds: 120, phaseSeed: 'merge_queue github.com/acme/web main' };
    let plan = planLookups(items, new Map(), { ...options, now: 0 });
    expect(plan.lookUp).toHaveLength(40);
    let memory = rememberLookups(
      plan,
      new Map(items.map((i) => [i.prNumber, detail])),
      new Map(),
      0,
    );
    const perPoll: number[] = [];
    const rechecked = new Map<number, number>();
    for (let now = 30; now <= 240; now += 30) {
      plan = planLookups(items, memory, { ...options, now });
      perPoll.push(plan.lookUp.length);
      for (const looked of plan.lookUp) {
        rechecked.set(looked.prNumber, (rechecked.get(looked.prNumber) ?? 0) + 1);
      }
      memory = rememberLookups(
        plan,
        new Map(plan.lookUp.map((i) => [i.prNumber, detail])),
        memory,
        now,
      );
    }
    // Exactly twice each over (0, 240], and no poll carries the whole queue.
    expect([...rechecked.values()]).toEqual(Array.from({ length: 40 }, () => 2));
    expect(perPoll.reduce((a, b) => a + b, 0)).toBe(80);
    expect(Math.max(...perPoll)).toBeLessThanOrEqual(20);
  });

  it('is always due when the recheck interval is 0, and never twice within one interval', () => {
    const base = { phaseSeed: 'q', recheckSeconds: 0 };
    expect(isRecheckDue(100, 5, { ...base, now: 100 })).toBe(true);
    const every = { phaseSeed: 'q', recheckSeconds: 300 };
    const due = [30, 60, 90, 120, 150, 180, 210, 240, 270, 300].filter((now) =>
      isRecheckDue(0, 5, { ...every, now }),
    );
    // Once a phase point passes it stays due until the PR is looked up again.
    expect(due.length).toBeGreaterThan(0);
    expect(isRecheckDue(0, 5, { ...every, now: 300 })).toBe(true);
    expect(isRecheckDue(300, 5, { ...every, now: 300 })).toBe(false);
  });
});

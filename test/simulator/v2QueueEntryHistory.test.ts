// GET /v2/queue-entry-history and /v2/pull-requests/{id}/queue-entry-history against the
// definition's words: every state change the world announces is in its entry's timeline, with a
// reason from the definition's vocabulary for that state, and the batch read's rules (at most 50
// ids, a member that is not a uuid named, lowercased ids, an unknown id an empty group, `limit`
// counting pull requests, `direction`).
import { describe, expect, it } from 'vitest';
import type { SimulatedPullRequest } from '../../src/simulator/pullRequest.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { createDemoWorld } from '../../src/demo/demo.js';
import { webhookPayloads } from '../../src/simulator/webhookPayloads.js';
import { startTestSimulator } from '../support/simulator.js';
import { TEST_TOKEN } from './harness.js';
import { errorOf, getPage, startV2Simulator, TEST_API_KEY, v2Request, walk } from './v2Harness.js';

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/**
 * The reasons the definition lists for each state (`QueueEntryStateTransition.reason`), copied
 * from its description; `testing` and `pendingFailure` "carry no reason".
 */
const REASONS: Readonly<Record<string, readonly string[]>> = {
  notReady: ['USER_REQUESTED', 'TRUNK_ADMIN_REQUESTED', 'API_REQUESTED'],
  pending: [
    'TESTS_RESTARTED_BY_USER',
    'TESTS_RESTARTED_BY_API_REQUEST',
    'MERGE_ITEM_NOW_READY',
    'MANUAL_PUSH_TO_TARGET_BRANCH',
    'PREREQUISITE_MERGE_ITEM_FAILED',
    'PREREQUISITE_MERGE_ITEM_CANCELLED',
    'PREREQUISITE_MERGE_ITEM_MANUALLY_MERGED',
    'SKIP_THE_LINE_INTERRUPTED',
    'BISECTION_REQUIRED',
    'BISECTION_TEST_RUN_PASSED',
  ],
  testsPassed: ['TEST_RUN_PASSED', 'SUCCESSOR_TEST_RUN_PASSED', 'PASSED_BY_OPTIMIZATION'],
  failed: [
    'TEST_RUN_REQUIRED_STATUS_FAILED',
    'TEST_RUN_TIMEOUT',
    'TEST_RUN_FAILED_BY_OPTIMIZATION',
    'START_TEST_RUN_MERGE_CONFLICT',
    'GITHUB_API_MERGE_PR_FAILED',
  ],
  cancelled: [
    'USER_REQUESTED',
    'TRUNK_ADMIN_REQUESTED',
    'PR_CLOSED',
    'PR_MERGED_INTO_OTHER_BRANCH',
    'PR_PUSHED_TO',
    'PR_BASE_BRANCH_CHANGED',
    'PR_CONVERTED_TO_DRAFT',
    'NOT_READY_TIMEOUT_EXPIRED',
  ],
  merged: ['MERGE_GRAPH_MERGE', 'MERGE_GRAPH_DIRECT_MERGE', 'MANUAL_MERGE'],
  testing: [],
  pendingFailure: [],
};
const DETAILS = ['notReady', 'pending', 'testsPassed', 'pendingFailure', 'failed'];

/** v1's snake_case state in v2's camelCase. */
const camel = (state: string) => state.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

type Transition = Record<string, unknown>;

/** The groups of the batch read for `ids` (at most 50 per call), every page. */
async function timelines(simulator: RunningSimulator, ids: readonly string[]) {
  const groups = new Map<string, Transition[]>();
  for (let start = 0; start < ids.length; start += 50) {
    const asked = ids.slice(start, start + 50).join(',');
    const { rows } = await walk(simulator, `/v2/queue-entry-history?pullRequestIds=${asked}`);
    for (const row of rows) groups.set(String(row.pullRequestId), row.transitions as Transition[]);
  }
  return groups;
}

describe('queue-entry history', () => {
  it('holds every state change the world announced, as it happened, with a reason for it', async () => {
    const simulator = await startV2Simulator({ seed: 8 });
    const { world } = simulator;
    const since = world.now();
    // The world's own announcements (what its webhooks are made of) are the witness.
    const announced = new Map<string, string[]>();
    const pullRequests = new Map<string, SimulatedPullRequest>();
    world.subscribe((event) => {
      if (event.kind !== 'pull_request') return;
      pullRequests.set(event.pr.id, event.pr);
      const seen = announced.get(event.pr.id) ?? [];
      seen.push(`${camel(event.pr.state)}@${iso(event.at)}`);
      announced.set(event.pr.id, seen);
    });
    world.advance(since + 4 * 3600);
    const groups = await timelines(simulator, [...announced.keys()]);
    const reasons = new Map<string, number>();
    let transitions = 0;
    let withoutReason = 0;
    for (const [id, told] of announced) {
      const timeline = groups.get(id) ?? [];
      // "Its queue entry's state transitions, oldest first by default".
      const recent = timeline.filter((t) => Date.parse(String(t.changedAt)) / 1000 > since);
      expect(
        recent.map((t) => `${String(t.state)}@${String(t.changedAt)}`),
        id,
      ).toEqual(told);
      for (const t of timeline) {
        const state = String(t.state);
        transitions += 1;
        if (t.reason === null)
          withoutReason += Number(!['testing', 'pendingFailure'].includes(state));
        else {
          const reason = t.reason as string;
          expect(REASONS[state], `${state} ${reason}`).toContain(reason);
          const key = `${state}:${reason}`;
          reasons.set(key, (reasons.get(key) ?? 0) + 1);
        }
        // "`null` for `testing` and `pendingFailure`, which carry no reason."
        if (['testing', 'pendingFailure'].includes(state)) expect(t.reason).toBeNull();
        // "present for `testing`, for `testsPassed`".
        if (['testing', 'testsPassed'].includes(state))
          expect(t.verificationRunId).toBeTypeOf('string');
        // "At most one of notReady, pending, testsPassed, pendingFailure and failed is present,
        // matching state".
        expect(DETAILS.filter((name) => name in t)).toEqual(DETAILS.includes(state) ? [state] : []);
        if (t.prerequisitePullRequestId !== undefined) {
          // "always one of pending.prerequisitePullRequests".
          const pending = t.pending as { prerequisitePullRequests: { pullRequestId: string }[] };
          expect(pending.prerequisitePullRequests.map((ref) => ref.pullRequestId)).toContain(
            t.prerequisitePullRequestId,
          );
        }
        // "At least one identifier is present."
        if (t.actor !== undefined) expect(Object.keys(t.actor as object).length).toBeGreaterThan(0);
      }
    }
    expect(pullRequests.size).toBeGreaterThan(50);
    // Null reasons beyond testing and pendingFailure: now and then, not often.
    expect(withoutReason).toBeGreaterThan(0);
    expect(withoutReason / transitions).toBeLessThan(0.03);
    for (const reason of [
      'notReady:USER_REQUESTED',
      'notReady:API_REQUESTED',
      'pending:MERGE_ITEM_NOW_READY',
      'pending:PREREQUISITE_MERGE_ITEM_FAILED',
      'testsPassed:TEST_RUN_PASSED',
      'failed:TEST_RUN_REQUIRED_STATUS_FAILED',
      'cancelled:PR_CLOSED',
      'merged:MERGE_GRAPH_MERGE',
    ]) {
      expect(reasons.get(reason), reason).toBeGreaterThan(0);
    }
  });

  it("tells each failure and cancellation in its webhook with its history's reason", async () => {
    // The demo's world: its failure bursts fail pull requests from pending, before any run starts.
    const { world } = createDemoWorld(12, 1_795_860_990);
    const { simulator } = await startTestSimulator({
      world,
      token: TEST_TOKEN,
      apiKey: TEST_API_KEY,
    });
    const told: { id: string; at: string; state: string; reason: unknown }[] = [];
    world.subscribe((event) => {
      for (const { body } of webhookPayloads(event)) {
        if (body.action === 'failed' || body.action === 'canceled') {
          told.push({
            id: event.kind === 'pull_request' ? event.pr.id : '',
            at: String(body.timestamp),
            state: body.action === 'failed' ? 'failed' : 'cancelled',
            // The webhook pages name `failure_reason` of a failure; a cancellation's reason is
            // `cancellation_reason`. Absent when the history records none.
            reason: body.failure_reason ?? body.cancellation_reason ?? null,
          });
        }
      }
    });
    world.advance(world.now() + 3600);
    const groups = await timelines(simulator, [...new Set(told.map(({ id }) => id))]);
    const reasons = new Set<unknown>();
    for (const { id, at, state, reason } of told) {
      const transition = groups.get(id)?.find((t) => t.changedAt === at && t.state === state);
      expect(transition, `${id} ${state} at ${at}`).toBeDefined();
      expect(reason, `${id} ${state} at ${at}`).toBe(transition?.reason);
      reasons.add(`${state}:${String(reason)}`);
    }
    for (const reason of [
      'failed:START_TEST_RUN_MERGE_CONFLICT',
      'failed:TEST_RUN_REQUIRED_STATUS_FAILED',
      'cancelled:PR_CLOSED',
      'cancelled:USER_REQUESTED',
    ]) {
      expect(reasons, reason).toContain(reason);
    }
  });

  it('reads up to 50 pull requests at once, as the batch read is defined', async () => {
    const simulator = await startV2Simulator({ seed: 9 });
    simulator.world.advance(simulator.world.now() + 3600);
    const queueId = String((await getPage(simulator, '/v2/merge-queues')).data[0]?.id);
    const prs = (await getPage(simulator, `/v2/merge-queues/${queueId}/pull-requests?limit=4`))
      .data;
    const ids = prs.map((pr) => String(pr.id));
    const unknown = '00000000-0000-4000-8000-00000000abcd';
    const one = async (id: string, direction = '') =>
      (await walk(simulator, `/v2/pull-requests/${id}/queue-entry-history?limit=2${direction}`))
        .rows;
    // "limit counts pull requests, not transitions, and every group carries that pull request's
    // whole timeline"; an id "that was never enqueued, comes back as an empty group"; "Ids are
    // normalized to lowercase in the response"; "a repeated id is read once".
    const asked = [...ids, unknown, ids[0]?.toUpperCase()].join(',');
    const { rows, pages } = await walk(
      simulator,
      `/v2/queue-entry-history?pullRequestIds=${asked}&limit=2`,
    );
    expect(pages).toBe(3);
    expect(rows.map((row) => row.pullRequestId)).toEqual([...ids, unknown]);
    for (const [index, id] of ids.entries()) {
      expect(rows[index]?.transitions).toEqual(await one(id));
    }
    expect(rows.at(-1)?.transitions).toEqual([]);
    // "send direction=newest for v1's includeTimeline order".
    const newest = await getPage(
      simulator,
      `/v2/queue-entry-history?pullRequestIds=${ids.join(',')}&direction=newest&limit=50`,
    );
    for (const [index, id] of ids.entries()) {
      const oldest = await one(id);
      expect(newest.data[index]?.transitions).toEqual([...oldest].reverse());
      expect(await one(id, '&direction=newest')).toEqual([...oldest].reverse());
    }

    // "at most 50"; "A member that is not a uuid is a 400 naming it".
    const many = Array.from(
      { length: 51 },
      (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    );
    const refusals: [string, string][] = [
      [`pullRequestIds=${many.join(',')}`, 'at most 50'],
      [`pullRequestIds=${unknown},not-a-uuid`, '"not-a-uuid"'],
      ['', 'pullRequestIds is required'],
      [`pullRequestIds=${unknown}&direction=up`, 'direction'],
    ];
    for (const [query, message] of refusals) {
      const reply = await v2Request(simulator, `/v2/queue-entry-history?${query}`);
      expect(reply.status, query).toBe(400);
      expect(errorOf(reply)?.code).toBe('VALIDATION_FAILED');
      expect(errorOf(reply)?.message).toContain(message);
    }
    // A pull request's own history: 404 for one no queue knows, 400 for an id that is no uuid.
    const missing = await v2Request(simulator, `/v2/pull-requests/${unknown}/queue-entry-history`);
    expect([missing.status, errorOf(missing)?.code]).toEqual([404, 'PR_NOT_FOUND']);
    const malformed = await v2Request(simulator, '/v2/pull-requests/1234/queue-entry-history');
    expect([malformed.status, errorOf(malformed)?.code]).toEqual([400, 'VALIDATION_FAILED']);
    expect(simulator.requestCounts()).toHaveProperty('/v2/queue-entry-history');
    expect(simulator.requestCounts()).toHaveProperty('/v2/pull-requests/{id}/queue-entry-history');
  });

  it("pages one entry's transitions oldest first while the world moves, none skipped or repeated", async () => {
    const simulator = await startV2Simulator({ seed: 10 });
    const { world } = simulator;
    world.advance(world.now() + 1800);
    const [queue] = world.mergeQueues;
    const pr =
      queue?.model.active.find((candidate) => candidate.state === 'not_ready') ??
      queue?.model.active[0];
    if (pr === undefined) throw new Error('no pull request');
    const path = `/v2/pull-requests/${pr.id}/queue-entry-history`;
    const { rows } = await walk(simulator, `${path}?limit=1`, () => {
      world.advance(world.now() + 120);
    });
    const final = (await walk(simulator, `${path}?limit=100`)).rows;
    // "an append-only log a reader replays forward": the walk read a prefix of it, in order.
    expect(rows.length).toBeGreaterThan(1);
    expect(rows).toEqual(final.slice(0, rows.length));
  });
});

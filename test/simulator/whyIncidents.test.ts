// The two incidents the demo will name alerts for, as the served API shows them: a required check
// (`e2e`) that fails every run of its queue for 20 minutes, and a run of direct pushes to a target
// branch, each restarting the queue's testing entries. Scheduled by the demo's own incident cycle
// (one entry each), in a busy seeded world.
import { describe, expect, it } from 'vitest';
import {
  createIncidentCycle,
  FAILING_REQUIRED_CHECK,
  REQUIRED_CHECK_FAILING_SECONDS,
  TARGET_BRANCH_PUSH_EVERY_SECONDS,
  type ScriptedIncident,
} from '../../src/simulator/incidents.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { createSimulatorWorld, DEFAULT_SIMULATOR_START_TIME } from '../../src/simulator/world.js';
import { getOne, getPage, startV2Simulator, walk } from './v2Harness.js';

const ORIGIN = DEFAULT_SIMULATOR_START_TIME;
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
const at = (text: unknown) => Date.parse(String(text)) / 1000;

/** A world of seed 1 from ORIGIN with `incident` scheduled, served, and its queue's v2 id. */
async function withIncident(incident: ScriptedIncident) {
  const world = createSimulatorWorld({
    seed: 1,
    startTime: ORIGIN,
    script: createIncidentCycle(ORIGIN, [incident]),
  });
  const simulator = await startV2Simulator({ world });
  const queue = (await getPage(simulator, '/v2/merge-queues')).data.find(
    (row) =>
      row.repositoryUrl === `https://${incident.repo}` && row.targetBranch === incident.branch,
  );
  return { world, simulator, queueId: String(queue?.id) };
}

async function transitionsOf(simulator: RunningSimulator, id: string) {
  return (await walk(simulator, `/v2/pull-requests/${id}/queue-entry-history?limit=100`)).rows;
}

describe('a required check failing every run of a queue', () => {
  it('fails each run started and ended in its 20 minutes on e2e, and the entries with it', async () => {
    const start = ORIGIN + 60;
    const end = start + REQUIRED_CHECK_FAILING_SECONDS;
    const { world, simulator, queueId } = await withIncident({
      kind: 'required_check_failing',
      repo: 'github.com/acme/web',
      branch: 'main',
      startsAfterSeconds: 60,
      lastsSeconds: REQUIRED_CHECK_FAILING_SECONDS,
      everySeconds: 6 * 3600,
      alert: 'an alert of issue 39 to come',
    });
    expect(FAILING_REQUIRED_CHECK).toBe('e2e');
    expect(REQUIRED_CHECK_FAILING_SECONDS).toBe(20 * 60);
    world.advance(end + 1800);
    const queue = await getOne(simulator, `/v2/merge-queues/${queueId}`);
    // The check is required from the incident on: "A check in `checks` is required iff its
    // `name` is in this list."
    expect((queue.config as { requiredStatuses: string[] }).requiredStatuses).toContain('e2e');

    const { rows: runs } = await walk(
      simulator,
      `/v2/merge-queues/${queueId}/verification-runs?createdAfter=${iso(ORIGIN - 2 * 3600)}&limit=100`,
    );
    const within = runs.filter(
      (run) => at(run.createdAt) >= start && at(run.updatedAt) < end && run.status !== 'inProgress',
    );
    const failedOnE2e = within.filter((run) => run.status === 'failed');
    // Every run of the window failed ("a required check failed, or the run exceeded the queue's
    // testingTimeoutMinutes"), or was abandoned; none succeeded.
    expect(within.map((run) => run.status).filter((status) => status === 'succeeded')).toEqual([]);
    expect(failedOnE2e.length).toBeGreaterThanOrEqual(2);
    for (const run of failedOnE2e) {
      const failing = (run.checks as { name: string; conclusion: string }[])
        .filter((check) => (run.requiredStatuses as string[]).includes(check.name))
        .filter((check) => ['failure', 'timeout'].includes(check.conclusion))
        .map((check) => `${check.name}:${check.conclusion}`);
      // e2e failed it, unless it hung past the testing timeout first.
      expect(
        failing.includes('e2e:failure') || failing.some((check) => check.endsWith(':timeout')),
        String(run.id),
      ).toBe(true);
    }
    // Before it and after it, the same queue's runs pass as usual.
    const passed = (from: number, to: number) =>
      runs.filter(
        (run) => run.status === 'succeeded' && at(run.updatedAt) >= from && at(run.updatedAt) < to,
      ).length;
    expect(passed(ORIGIN - 2 * 3600, start)).toBeGreaterThan(0);
    expect(passed(end, end + 1800)).toBeGreaterThan(0);

    // The entries those runs failed left with "TEST_RUN_REQUIRED_STATUS_FAILED", naming e2e.
    const failedRunIds = new Set(failedOnE2e.map((run) => String(run.id)));
    const entries = new Set(
      failedOnE2e.flatMap((run) => (run.testedPullRequests as { id: string }[]).map((pr) => pr.id)),
    );
    let failedEntries = 0;
    for (const id of entries) {
      for (const transition of await transitionsOf(simulator, id)) {
        if (
          transition.state !== 'failed' ||
          !failedRunIds.has(String(transition.verificationRunId))
        ) {
          continue;
        }
        failedEntries += 1;
        expect([null, 'TEST_RUN_REQUIRED_STATUS_FAILED', 'TEST_RUN_TIMEOUT']).toContain(
          transition.reason,
        );
        if (transition.reason === 'TEST_RUN_REQUIRED_STATUS_FAILED') {
          expect(
            (transition.failed as { failureCausingChecks: { name: string }[] })
              .failureCausingChecks,
          ).toEqual([expect.objectContaining({ name: 'e2e' })]);
        }
      }
    }
    expect(failedEntries).toBeGreaterThan(0);
  });
});

describe('direct pushes to a target branch', () => {
  it('restart every testing entry of the queue at each push, and only then', async () => {
    const start = ORIGIN + 120;
    const { world, simulator, queueId } = await withIncident({
      kind: 'target_branch_pushes',
      repo: 'github.com/acme/api',
      branch: 'main',
      startsAfterSeconds: 120,
      lastsSeconds: 300,
      everySeconds: 6 * 3600,
      alert: 'an alert of issue 39 to come',
    });
    // A push at the start and one a minute after, while it lasts: at 0, 60, 120, 180 and 240 s.
    expect(TARGET_BRANCH_PUSH_EVERY_SECONDS).toBe(60);
    const pushes = [0, 60, 120, 180, 240].map((offset) => start + offset);
    const testing = `/v2/merge-queues/${queueId}/pull-requests?state=testing&limit=100`;
    const restarted = new Map<string, number>();
    for (const push of pushes) {
      world.advance(push - 5);
      const before = (await getPage(simulator, testing)).data.map((row) => String(row.id));
      world.advance(push);
      // What is testing now started in this very step: everything older left testing.
      const after = (await getPage(simulator, testing)).data;
      for (const row of after) {
        expect((row.queueEntry as { stateChangedAt: string }).stateChangedAt).toBe(iso(push));
      }
      for (const id of before) if (!after.some((row) => row.id === id)) restarted.set(id, push);
    }
    world.advance(start + 600);

    let restarts = 0;
    for (const [id, push] of restarted) {
      const transitions = await transitionsOf(simulator, id);
      const index = transitions.findIndex((transition) => at(transition.changedAt) === push);
      const transition = transitions[index];
      // It may have passed or failed at that step before the push came; otherwise it restarted:
      // "Someone pushed to the target branch, invalidating the tested state."
      if (transition?.state !== 'pending') continue;
      expect(transitions[index - 1]?.state).toBe('testing');
      expect([null, 'MANUAL_PUSH_TO_TARGET_BRANCH']).toContain(transition.reason);
      restarts += 1;
      // The run it was testing on was abandoned, when it tested nothing else.
      const runId = String(transitions[index - 1]?.verificationRunId);
      const run = await getOne(simulator, `/v2/merge-queue-verification-runs/${runId}`);
      if ((run.testedPullRequests as unknown[]).length === 1) expect(run.status).toBe('cancelled');
      // The pushes are the only ones in this world.
      const pushedAt = transitions
        .filter((each) => each.reason === 'MANUAL_PUSH_TO_TARGET_BRANCH')
        .map((each) => at(each.changedAt));
      expect(pushedAt.every((time) => pushes.includes(time))).toBe(true);
    }
    expect(restarts).toBeGreaterThan(2);
  });
});

describe('an incident that lasts longer than it recurs', () => {
  it('is refused, naming it, rather than started again before it ends', () => {
    const incident: ScriptedIncident = {
      kind: 'required_check_failing',
      repo: 'github.com/acme/web',
      branch: 'main',
      startsAfterSeconds: 60,
      lastsSeconds: REQUIRED_CHECK_FAILING_SECONDS,
      alert: 'an alert of issue 39 to come',
    };
    expect(() => createIncidentCycle(ORIGIN, [incident])).toThrow(
      'incident required_check_failing on github.com/acme/web lasts 1200 s, longer than it recurs',
    );
    expect(() => createIncidentCycle(ORIGIN, [{ ...incident, everySeconds: 3600 }])).not.toThrow();
  });
});

// The demo's incident cycle, time compressed: the test moves the demo's world (random model plus
// incident script) forward itself, waits for the exporter's next poll and reads /metrics, so ten
// simulated minutes take seconds.
import { afterEach, describe, expect, it } from 'vitest';
import { createDemoWorld, demoConfig } from '../../src/demo/demo.js';
import { startExporter, type RunningExporter } from '../../src/exporter.js';
import { silentLogger } from '../../src/log/logger.js';
import {
  DEMO_INCIDENTS,
  FAILING_REQUIRED_CHECK,
  FAILURE_BURST_SIZE,
  INCIDENT_CYCLE_SECONDS,
  QUARANTINE_JUMP_SIZE,
  STALLED_BEFORE_START_SECONDS,
  type IncidentKind,
} from '../../src/simulator/incidents.js';
import {
  repositoryKey,
  SIMULATOR_DEMO_API_KEY,
  SIMULATOR_DEMO_TOKEN,
} from '../../src/simulator/repositories.js';
import { createSimulatorWorld, type SimulatorWorld } from '../../src/simulator/world.js';
import { alertingRules } from '../deploy/ruleFiles.js';
import { parseExposition, sum, type Sample } from '../support/exposition.js';
import { startTestSimulator } from '../support/simulator.js';

let exporter: RunningExporter | undefined;
afterEach(async () => {
  await exporter?.stop();
  exporter = undefined;
});

const incident = (kind: IncidentKind) => {
  const found = DEMO_INCIDENTS.find((candidate) => candidate.kind === kind);
  if (found === undefined) throw new Error(`no ${kind} incident in the cycle`);
  return found;
};

async function waitFor(what: string, condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('demo incident cycle', () => {
  it('names, for each incident, alerts that prometheus/alerts.yaml defines', () => {
    const alerts = new Set(alertingRules().map((rule) => rule.alert));
    const unknown = DEMO_INCIDENTS.flatMap(({ kind, alert, alsoDrives = [] }) =>
      [alert, ...alsoDrives].filter((name) => !alerts.has(name)).map((name) => `${kind}: ${name}`),
    );
    expect(unknown).toEqual([]);
  });

  it('leaves the random model alone until its first incident', () => {
    const origin = 1_767_225_600;
    const plain = createSimulatorWorld({ seed: 1, startTime: origin });
    const { world: scripted } = createDemoWorld(1, origin);
    // The stall runs before the start (beforeStart): its queue is left out of the comparison.
    const stalled = incident('stalled_queue');
    const queues = (world: SimulatorWorld) =>
      world.repositories.flatMap((repository) =>
        repository.branches
          .filter(
            (branch) =>
              `${repositoryKey(repository)}@${branch}` !== `${stalled.repo}@${stalled.branch}`,
          )
          .map((branch) => world.getQueue(repository, branch)),
      );
    expect(stalled.beforeStart).toBe(true);
    const first = Math.min(
      ...DEMO_INCIDENTS.filter((candidate) => candidate.beforeStart !== true).map(
        (candidate) => candidate.startsAfterSeconds,
      ),
    );
    plain.advance(origin + first - 5);
    scripted.advance(origin + first - 5);
    expect(queues(scripted)).toEqual(queues(plain));
    plain.advance(origin + first);
    scripted.advance(origin + first);
    expect(queues(scripted)).not.toEqual(queues(plain));
  });

  it('shows every scripted incident on /metrics, and the cycle repeats', async () => {
    // The world starts 15 simulated minutes in the past, so the test can move it up to the present
    // and every timestamp stays in the past as the live demo's do.
    const origin = Math.floor(Date.now() / 1000) - 15 * 60;
    const { world, incidents } = createDemoWorld(1, origin);
    const { simulator } = await startTestSimulator({
      world,
      token: SIMULATOR_DEMO_TOKEN,
      apiKey: SIMULATOR_DEMO_API_KEY,
      faults: incidents,
    });
    const base = demoConfig(simulator.baseUrl, { port: 0, address: '127.0.0.1' });
    const running = await startExporter(
      {
        ...base,
        polling: {
          ...base.polling,
          mergeQueueIntervalSeconds: 0.3,
          flakyTestsIntervalSeconds: 0.3,
        },
      },
      { logger: silentLogger(), version: '0.0.0-test' },
    );
    exporter = running;
    // The demo lists no target: wait until discovery has found them and each was polled.
    await waitFor('discovery and a first poll of every target', () =>
      running.store.allPolledOnce(),
    );

    /** Moves the world to `offset` seconds after the origin and reads /metrics after a full poll. */
    const at = async (offset: number, settle?: (samples: Sample[]) => boolean) => {
      moveWorld(world, origin + offset);
      const movedAt = Date.now() / 1000;
      await waitFor(`a poll of every target after offset ${offset}`, () =>
        running.store
          .statuses()
          .every(
            (status) =>
              status.lastAttemptAt !== undefined &&
              status.lastAttemptAt - (status.lastDurationSeconds ?? 0) > movedAt,
          ),
      );
      let samples = parseExposition(await (await fetch(`${running.url}/metrics`)).text());
      const deadline = Date.now() + 20_000;
      while (settle !== undefined && !settle(samples) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        samples = parseExposition(await (await fetch(`${running.url}/metrics`)).text());
      }
      return samples;
    };
    const queueState = (samples: Sample[], repo: string, branch: string, state: string) =>
      sum(samples, 'trunk_merge_queue_state', { repo, branch, state });

    const paused = incident('paused');
    const draining = incident('draining');
    const stuck = incident('stuck_testing');
    const burst = incident('failure_burst');
    const jump = incident('quarantine_jump');
    const outage = incident('api_outage');

    // Read through API v2, a queue's state comes from the organization's list of queues, which the
    // polls of one interval share: it may show the move one poll later.
    const inState = (repo: string, branch: string, state: string) => (list: Sample[]) =>
      queueState(list, repo, branch, state) === 1;
    let samples = await at(
      paused.startsAfterSeconds - 5,
      inState(paused.repo, paused.branch, 'running'),
    );
    expect(queueState(samples, paused.repo, paused.branch, 'running')).toBe(1);
    samples = await at(
      paused.startsAfterSeconds + 5,
      inState(paused.repo, paused.branch, 'paused'),
    );
    expect(queueState(samples, paused.repo, paused.branch, 'paused')).toBe(1);

    samples = await at(
      draining.startsAfterSeconds + 5,
      inState(draining.repo, draining.branch, 'draining'),
    );
    expect(queueState(samples, draining.repo, draining.branch, 'draining')).toBe(1);

    samples = await at(stuck.startsAfterSeconds + 5);
    const testingSince = sum(samples, 'trunk_merge_queue_oldest_state_change_timestamp_seconds', {
      repo: stuck.repo,
      branch: stuck.branch,
      state: 'testing',
    });
    const timeout = sum(samples, 'trunk_merge_queue_testing_timeout_seconds', {
      repo: stuck.repo,
      branch: stuck.branch,
    });
    // The alert's expression, on the simulated clock: testing for longer than timeout + 30 min.
    expect(timeout).toBeGreaterThan(0);
    expect(world.now() - testingSince).toBeGreaterThan(timeout + 1800);

    const failed = (list: Sample[]) =>
      sum(list, 'trunk_merge_queue_pull_requests_exited_total', {
        repo: burst.repo,
        branch: burst.branch,
        outcome: 'failed',
      });
    samples = await at(burst.startsAfterSeconds + 5);
    const failedBefore = failed(samples);
    samples = await at(
      burst.startsAfterSeconds + burst.lastsSeconds + 5,
      (list) => failed(list) >= failedBefore + FAILURE_BURST_SIZE,
    );
    expect(failed(samples) - failedBefore).toBeGreaterThanOrEqual(FAILURE_BURST_SIZE);

    // The pause is over: the queue runs again.
    samples = await at(
      paused.startsAfterSeconds + paused.lastsSeconds + 5,
      inState(paused.repo, paused.branch, 'running'),
    );
    expect(queueState(samples, paused.repo, paused.branch, 'running')).toBe(1);

    const quarantined = (list: Sample[]) =>
      sum(list, 'trunk_flaky_tests_quarantined', { repo: jump.repo });
    samples = await at(jump.startsAfterSeconds - 5);
    const quarantinedBefore = quarantined(samples);
    // As queue states: the organization's quarantine list is read once per interval for all lists.
    samples = await at(
      jump.startsAfterSeconds + 5,
      (list) => quarantined(list) - quarantinedBefore === QUARANTINE_JUMP_SIZE,
    );
    expect(quarantined(samples) - quarantinedBefore).toBe(QUARANTINE_JUMP_SIZE);

    const up = (list: Sample[]) =>
      sum(list, 'trunk_exporter_target_up', { repo: outage.repo, kind: 'merge_queue' });
    const answered503 = (list: Sample[]) =>
      sum(list, 'trunk_exporter_api_requests_total', { code: '503' });
    // A poll a busy machine runs past its 0.3 s interval shows 0 until it ends.
    samples = await at(outage.startsAfterSeconds - 5, (list) => up(list) === 1);
    expect(up(samples)).toBe(1);
    expect(answered503(samples)).toBe(0);
    samples = await at(outage.startsAfterSeconds + 5, (list) => up(list) === 0);
    expect(up(samples)).toBe(0);
    expect(answered503(samples)).toBeGreaterThan(0);
    samples = await at(
      outage.startsAfterSeconds + outage.lastsSeconds + 5,
      (list) => up(list) === 1,
    );
    expect(up(samples)).toBe(1);

    // The next cycle pauses the same queue again.
    samples = await at(
      INCIDENT_CYCLE_SECONDS + paused.startsAfterSeconds + 5,
      inState(paused.repo, paused.branch, 'paused'),
    );
    expect(queueState(samples, paused.repo, paused.branch, 'paused')).toBe(1);
  }, 120_000);
});

function moveWorld(world: SimulatorWorld, to: number): void {
  if (to > Date.now() / 1000)
    throw new Error('the test moved the simulated world past the present');
  world.advance(to);
}

describe("the demo's incidents in the simulated API", () => {
  const ORIGIN = 1_767_225_600;
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

  /** The demo world at ORIGIN behind a simulator, and its queues' v2 ids by `repo@branch`. */
  async function demoSimulator() {
    const { world, incidents } = createDemoWorld(1, ORIGIN);
    const { simulator } = await startTestSimulator({
      world,
      token: SIMULATOR_DEMO_TOKEN,
      apiKey: SIMULATOR_DEMO_API_KEY,
      faults: incidents,
    });
    const get = async (path: string) => {
      const response = await fetch(`${simulator.origin}${path}`, {
        headers: { authorization: `Bearer ${SIMULATOR_DEMO_API_KEY}` },
      });
      expect(response.status, path).toBe(200);
      return (await response.json()) as {
        data: Record<string, unknown>[];
        nextCursor: string | null;
      };
    };
    const all = async (path: string) => {
      const rows: Record<string, unknown>[] = [];
      let cursor: string | null = null;
      do {
        const join = path.includes('?') ? '&' : '?';
        const page = await get(
          cursor === null ? path : `${path}${join}cursor=${encodeURIComponent(cursor)}`,
        );
        rows.push(...page.data);
        cursor = page.nextCursor;
      } while (cursor !== null);
      return rows;
    };
    const queueIds = new Map(
      (await all('/v2/merge-queues')).map((row) => [
        `${String(row.repositoryUrl).replace('https://', '')}@${String(row.targetBranch)}`,
        String(row.id),
      ]),
    );
    const v1 = async (path: string, body: unknown) =>
      (await (
        await fetch(`${simulator.baseUrl}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-token': SIMULATOR_DEMO_TOKEN },
          body: JSON.stringify(body),
        })
      ).json()) as Record<string, unknown>;
    return { world, all, queueIds, v1 };
  }

  const repoOf = (key: string) => {
    const [host = '', owner = '', name = ''] = key.split('/');
    return { host, owner, name };
  };

  it('an eviction loop: one PR fails testing, is resubmitted and fails again', async () => {
    const { world, all, queueIds, v1 } = await demoSimulator();
    const loop = incident('eviction_loop');
    const start = ORIGIN + loop.startsAfterSeconds;
    const queueId = queueIds.get(`${loop.repo}@${loop.branch}`);
    const failed: number[] = [];
    let number: number | undefined;
    world.subscribe((event) => {
      if (event.kind !== 'pull_request' || repositoryKey(event.repository) !== loop.repo) return;
      // The script submits its PR after the step's own arrivals.
      if (event.from === undefined && event.at === start) number = event.pr.number;
      if (event.pr.state === 'failed' && event.at >= start) failed.push(event.pr.number);
    });
    // Midway, once it is back in the queue after a failure, v1 shows it submitted again.
    world.advance(start + Math.floor(loop.lastsSeconds / 2));
    if (number === undefined) throw new Error('the loop submitted nothing');
    expect(failed).toContain(number);
    const model = world.mergeQueues.find(
      (queue) =>
        repositoryKey(queue.repository) === loop.repo && queue.model.branch === loop.branch,
    )?.model;
    while (
      model?.active.some((pr) => pr.number === number) === false &&
      world.now() < start + loop.lastsSeconds
    ) {
      world.advance(world.now() + 5);
    }
    const midway = await v1('/getSubmittedPullRequest', {
      repo: repoOf(loop.repo),
      targetBranch: loop.branch,
      pr: { number },
    });
    expect(midway.isCurrentlySubmittedToQueue).toBe(true);
    world.advance(start + loop.lastsSeconds + 5);

    const attempts = (
      await all(`/v2/merge-queues/${String(queueId)}/testing-results?since=${iso(start)}`)
    ).filter((row) => row.pullRequestNumber === number);
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.filter((row) => row.outcome === 'failed').length).toBeGreaterThanOrEqual(3);
    expect(failed.filter((each) => each === number).length).toBeGreaterThanOrEqual(3);
    // One entry, reused: created at the first submission, concluded in the window each time.
    const rows = (
      await all(`/v2/merge-queues/${String(queueId)}/pull-requests?concludedAfter=${iso(start)}`)
    ).filter((row) => row.number === number);
    expect(rows.length).toBe(1);
    expect((rows[0]?.queueEntry as Record<string, unknown>).createdAt).toBe(iso(start));
    const after = await v1('/getSubmittedPullRequest', {
      repo: repoOf(loop.repo),
      targetBranch: loop.branch,
      pr: { number },
    });
    expect(['failed', 'cancelled']).toContain(after.state);
  });

  it('a stalled queue: PRs wait in a running queue, and nothing finishes testing or merges', async () => {
    const { world, all, queueIds, v1 } = await demoSimulator();
    const stall = incident('stalled_queue');
    // Its first occurrence began before the demo's start and runs into it.
    const start = ORIGIN + stall.startsAfterSeconds - (stall.everySeconds ?? 0);
    const end = start + stall.lastsSeconds;
    expect(start).toBe(ORIGIN - STALLED_BEFORE_START_SECONDS);
    expect(end).toBeGreaterThan(ORIGIN + 20 * 60);
    const queueId = queueIds.get(`${stall.repo}@${stall.branch}`);
    const merged: number[] = [];
    world.subscribe((event) => {
      if (
        event.kind === 'pull_request' &&
        event.branch === stall.branch &&
        event.pr.state === 'merged'
      ) {
        merged.push(event.at);
      }
    });
    // What the exporter reads at the demo's start: the queue's last merge is over an hour old.
    const concluded = await all(
      `/v2/merge-queues/${String(queueId)}/pull-requests?state=merged&concludedAfter=${iso(ORIGIN - 7 * 86_400)}`,
    );
    const lastMerge = Math.max(
      ...concluded.map((row) =>
        Date.parse(String((row.queueEntry as Record<string, unknown>).stateChangedAt)),
      ),
    );
    expect(lastMerge / 1000).toBeLessThanOrEqual(start + 5);
    expect(ORIGIN - lastMerge / 1000).toBeGreaterThan(3600);
    world.advance(end - 5);
    // A merge already on its way when the provider stopped answering may still land at once.
    expect(merged.filter((at) => at > start + 5)).toEqual([]);
    const ended = await all(
      `/v2/merge-queues/${String(queueId)}/testing-results?since=${iso(start + 5)}`,
    );
    // Nothing passes: testing that ended did so by a cancellation, a restart or a scripted failure.
    expect(ended.filter((row) => row.outcome === 'passed')).toEqual([]);
    const queue = await v1('/getQueue', { repo: repoOf(stall.repo), targetBranch: stall.branch });
    expect(queue.state).toBe('running');
    const waiting = (queue.enqueuedPullRequests as Record<string, unknown>[]).length;
    expect(waiting).toBeGreaterThan(0);
    const testing = await all(`/v2/merge-queues/${String(queueId)}/pull-requests?state=testing`);
    // PRs test and none finish (a cancelled PR's slot goes to the next, which hangs as well).
    expect(testing.length).toBeGreaterThan(0);
    // Once the provider answers again, the queue moves: testing ends and PRs merge.
    world.advance(end + 30 * 60);
    expect(merged.filter((at) => at > end).length).toBeGreaterThan(0);
  });

  // The demo starts when it is run, and the world's draws follow its start: a few starts a day,
  // 14 and 21 among them for a bisection run that another check failed before the incident and
  // that concludes in it (e2e failed 5 of 6 and 6 of 7 runs while such a run did not list it).
  it.each([0, 4, 8, 12, 14, 16, 20, 21].map((hours) => ORIGIN + hours * 3600 + 77))(
    "a failing check and pushes to a target branch cross their alerts' thresholds within 12 minutes (start %i)",
    (start) => {
      // What the alerts of prometheus/alerts.yaml count, from the queues' own records (the model):
      // TrunkMergeQueueRequiredCheckFailing, a required check that failed at least 3 runs and three
      // quarters of the runs concluded in 30 minutes; TrunkMergeQueueRestartStorm, at least 10
      // entries sent back to pending for one cause in 30 minutes. The exporter's counters grow from
      // its start, and increase() leaves out what a series holds at its first sample, at least the
      // first failure of e2e (its series appears with it): so 4 runs failed after the start, three
      // quarters of the runs without the first, and 10 restarts after the first push's.
      const { world } = createDemoWorld(1, start);
      const check = incident('required_check_failing');
      const pushes = incident('target_branch_pushes');
      const model = (repo: string, branch: string) => {
        const found = world.mergeQueues.find(
          (queue) => repositoryKey(queue.repository) === repo && queue.model.branch === branch,
        )?.model;
        if (found === undefined) throw new Error(`no queue ${repo} ${branch}`);
        return found;
      };
      const pushed = model(pushes.repo, pushes.branch);
      // "MANUAL_PUSH_TO_TARGET_BRANCH: Someone pushed to the target branch, invalidating the tested
      // state": the reason of each entry sent back to pending by a push.
      const restartedAt: number[] = [];
      world.subscribe((event) => {
        if (event.kind !== 'pull_request' || repositoryKey(event.repository) !== pushes.repo)
          return;
        if (event.branch !== pushes.branch || event.pr.state !== 'pending') return;
        const last = pushed.entries.timeline(event.pr.id)?.transitions.at(-1);
        if (last?.reason === 'MANUAL_PUSH_TO_TARGET_BRANCH') restartedAt.push(event.at);
      });
      const end = start + 12 * 60;
      world.advance(end);

      // "succeeded — every required check passed. failed — a required check failed": the runs
      // concluded since the start, and those e2e failed.
      const runs = model(check.repo, check.branch).verificationRuns.runs.filter(
        (run) => run.updatedAt > start && ['succeeded', 'failed'].includes(run.status),
      );
      const failedOnE2e = runs.filter(
        (run) =>
          run.status === 'failed' &&
          run.requiredStatuses.includes(FAILING_REQUIRED_CHECK) &&
          run.failing.some((failing) => failing.name === FAILING_REQUIRED_CHECK),
      );
      expect(failedOnE2e.length).toBeGreaterThanOrEqual(4);
      expect((failedOnE2e.length - 1) / runs.length).toBeGreaterThanOrEqual(0.75);
      // It "fails every run the queue concludes" from its start (docs' table of incidents).
      expect(
        runs.filter(
          (run) => run.updatedAt > start + check.startsAfterSeconds && !failedOnE2e.includes(run),
        ),
      ).toEqual([]);

      const firstPush = start + pushes.startsAfterSeconds;
      expect(restartedAt.filter((at) => at > firstPush && at <= end).length).toBeGreaterThanOrEqual(
        10,
      );
    },
  );

  it("no test is broken but the scripted one: the random model's broken tests are flaky", async () => {
    // A broken test raises TrunkBrokenTestsPresent (broken for a day) and TrunkTestsTurnedBroken
    // (turned broken today), which no incident of the random model would explain.
    const { world, all } = await demoSimulator();
    const broken = incident('test_broken');
    const start = ORIGIN + broken.startsAfterSeconds;
    const brokenIds = async () => (await all('/v2/tests?status=broken')).map((row) => row.id);
    expect(await brokenIds()).toEqual([]);
    // Monitors review tests as the world moves (about four status changes an hour per repository).
    world.advance(start - 5);
    expect(await brokenIds()).toEqual([]);
    world.advance(start + 5);
    expect(await brokenIds()).toHaveLength(1);
    world.advance(ORIGIN + 3 * 3600 + broken.startsAfterSeconds - 5);
    expect(await brokenIds()).toEqual([]);

    // The same tests as the random model's own world, from the same draws: broken ones flaky.
    const plain = createSimulatorWorld({ seed: 1, startTime: ORIGIN });
    const { world: demo } = createDemoWorld(1, ORIGIN);
    const tests = (each: SimulatorWorld) =>
      each.testCollections.flatMap(({ quarantine, unquarantined }) =>
        [...quarantine.tests, ...unquarantined.tests].map(({ testCaseId, status }) => ({
          testCaseId,
          status,
        })),
      );
    const plainTests = tests(plain);
    expect(plainTests.filter(({ status }) => status === 'BROKEN').length).toBeGreaterThan(10);
    expect(tests(demo)).toEqual(
      plainTests.map(({ testCaseId, status }) => ({
        testCaseId,
        status: status === 'BROKEN' ? 'FLAKY' : status,
      })),
    );
  });

  it('a test turning broken: v2 lists it among the broken tests while it lasts', async () => {
    const { world, all } = await demoSimulator();
    const broken = incident('test_broken');
    const start = ORIGIN + broken.startsAfterSeconds;
    const brokenIds = async () =>
      new Set(
        (await all('/v2/tests?status=broken&quarantineState=notQuarantined')).map((row) =>
          String(row.id),
        ),
      );
    world.advance(start - 5);
    const before = await brokenIds();
    world.advance(start + 5);
    const during = await all('/v2/tests?status=broken&quarantineState=notQuarantined');
    const turned = during.filter(
      (row) => !before.has(String(row.id)) && row.statusSince === iso(start),
    );
    expect(turned.length).toBe(1);
    const id = String(turned[0]?.id);
    world.advance(start + broken.lastsSeconds - 5);
    expect(await brokenIds()).toContain(id);
    world.advance(start + broken.lastsSeconds + 5);
    expect(await brokenIds()).not.toContain(id);
    // The next cycle breaks the same test again.
    world.advance(start + INCIDENT_CYCLE_SECONDS + 5);
    expect(await brokenIds()).toContain(id);
  });
});

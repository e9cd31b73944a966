// GET /v2/merge-queues/{id}/verification-runs, /v2/merge-queue-verification-runs/{id} and
// /v2/pull-requests/{id}/verification-runs against the definition's words: the runs the testing
// results name, their statuses and checks, newest first, `createdAfter` strictly after, one
// `status`, and a walk that neither skips nor repeats a run while the world moves.
import { describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { errorOf, getOne, getPage, startV2Simulator, v2Request, walk } from './v2Harness.js';

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

interface Check {
  readonly name: string;
  readonly kind: string;
  readonly status: string;
  readonly conclusion: string;
  readonly providerStatus?: string;
}

interface Run {
  readonly id: string;
  readonly status: string;
  readonly isBisection: boolean;
  readonly createdAt: string;
  readonly requiredStatuses: string[];
  readonly checks: Check[];
  readonly testedPullRequests: { readonly id: string; readonly number: number }[];
}

/** Every run of every queue, with the queue's id. */
async function allRuns(simulator: RunningSimulator) {
  const queues = (await getPage(simulator, '/v2/merge-queues')).data.map((row) => String(row.id));
  const runs: { queueId: string; run: Run }[] = [];
  for (const queueId of queues) {
    const { rows } = await walk(
      simulator,
      `/v2/merge-queues/${queueId}/verification-runs?limit=100`,
    );
    runs.push(...rows.map((row) => ({ queueId, run: row as unknown as Run })));
  }
  return { queues, runs };
}

describe('verification runs', () => {
  it('are the runs the testing results name, with the pull requests they tested', async () => {
    const simulator = await startV2Simulator({ seed: 1 });
    simulator.world.advance(simulator.world.now() + 4 * 3600);
    const { queues, runs } = await allRuns(simulator);
    const byId = new Map(runs.map(({ run }) => [run.id, run]));
    let named = 0;
    for (const queueId of queues) {
      const since = iso(simulator.world.now() - 6 * 3600);
      const { rows } = await walk(
        simulator,
        `/v2/merge-queues/${queueId}/testing-results?since=${since}&limit=100`,
      );
      for (const result of rows) {
        const runId = result.verificationRunId as string | undefined;
        if (runId === undefined) continue;
        // "The run this testing belongs to — pass it to GET /v2/merge-queue-verification-runs/{id}."
        const run = byId.get(runId);
        expect(run, `run ${runId}`).toBeDefined();
        expect(run?.testedPullRequests.map((pr) => pr.number)).toContain(result.pullRequestNumber);
        // A stretch of testing that failed fails its run; "`succeeded` — every required check passed".
        if (result.outcome === 'failed') expect(run?.status).toBe('failed');
        named += 1;
      }
    }
    expect(named).toBeGreaterThan(100);
    const one = runs[0]?.run;
    expect(await getOne(simulator, `/v2/merge-queue-verification-runs/${String(one?.id)}`)).toEqual(
      one,
    );
  });

  it('have the statuses and checks the definition describes', async () => {
    const simulator = await startV2Simulator({ seed: 3 });
    simulator.world.advance(simulator.world.now() + 6 * 3600);
    const { runs } = await allRuns(simulator);
    const statuses = new Set<string>();
    let bisections = 0;
    let optionalFailures = 0;
    let batches = 0;
    for (const { run } of runs) {
      statuses.add(run.status);
      if (run.isBisection) bisections += 1;
      if (run.testedPullRequests.length > 1) batches += 1;
      // "A check in `checks` is required iff its `name` is in this list."
      const required = run.checks.filter((check) => run.requiredStatuses.includes(check.name));
      const optional = run.checks.filter((check) => !run.requiredStatuses.includes(check.name));
      expect(required.map((check) => check.name).sort()).toEqual([...run.requiredStatuses].sort());
      expect(optional.length).toBeGreaterThan(0);
      for (const check of run.checks) {
        // "Only `completed` means `conclusion` is final; for `queued` and `inProgress` the
        // conclusion is a placeholder (`neutral`)."
        if (check.status !== 'completed') expect(check.conclusion).toBe('neutral');
        // providerStatus is "Absent on a `statusCheck`, which has no lifecycle of its own".
        if (check.kind === 'statusCheck') expect(check.providerStatus).toBeUndefined();
      }
      const concluded = (check: Check) => `${check.status}:${check.conclusion}`;
      if (run.status === 'succeeded') {
        // "`succeeded` — every required check passed."
        expect(required.map(concluded)).toEqual(required.map(() => 'completed:success'));
        optionalFailures += optional.filter((check) => check.conclusion === 'failure').length;
      }
      if (run.status === 'failed') {
        // "`failed` — a required check failed, or the run exceeded the queue's
        // testingTimeoutMinutes."
        expect(
          required.some((check) => ['failure', 'timeout'].includes(check.conclusion)),
          run.id,
        ).toBe(true);
      }
      if (run.status === 'inProgress') {
        // "`inProgress` — checks are still running."
        expect(required.some((check) => check.status !== 'completed')).toBe(true);
      }
    }
    expect([...statuses].sort()).toEqual(['cancelled', 'failed', 'inProgress', 'succeeded']);
    expect(bisections).toBeGreaterThan(0);
    expect(batches).toBeGreaterThan(0);
    // An optional check fails now and then without failing its run.
    expect(optionalFailures).toBeGreaterThan(0);
  });

  it('list newest first, created strictly after createdAfter, of one status', async () => {
    const simulator = await startV2Simulator({ seed: 2 });
    simulator.world.advance(simulator.world.now() + 3 * 3600);
    const queueId = String((await getPage(simulator, '/v2/merge-queues')).data[0]?.id);
    const path = `/v2/merge-queues/${queueId}/verification-runs`;
    const { rows } = await walk(simulator, `${path}?limit=100`);
    const created = rows.map((row) => Date.parse(String(row.createdAt)));
    // "Lists the queue's verification runs, newest first."
    expect(created).toEqual([...created].sort((a, b) => b - a));
    // "Only runs created strictly after this instant."
    const middle = rows[Math.floor(rows.length / 2)];
    const at = String(middle?.createdAt);
    const after = await walk(simulator, `${path}?createdAfter=${at}&limit=100`);
    expect(after.rows.map((row) => row.id)).toEqual(
      rows.filter((row) => Date.parse(String(row.createdAt)) > Date.parse(at)).map((row) => row.id),
    );
    expect(after.rows.map((row) => row.id)).not.toContain(middle?.id);
    const failed = await walk(simulator, `${path}?status=failed&limit=100`);
    expect(failed.rows.map((row) => row.id)).toEqual(
      rows.filter((row) => row.status === 'failed').map((row) => row.id),
    );
    expect(failed.rows.length).toBeGreaterThan(0);
    // "`sort` and `direction` are not configurable yet: sending either with a non-default value
    // is rejected with `400`"; the status is "One verification-run status. Sending any other
    // value — including a comma-separated list … — is a `400`."
    expect((await v2Request(simulator, `${path}?sort=createdAt&direction=desc`)).status).toBe(200);
    for (const query of ['status=failed,succeeded', 'status=bogus', 'direction=asc', 'sort=id']) {
      const refused = await v2Request(simulator, `${path}?${query}`);
      expect(refused.status, query).toBe(400);
      expect(errorOf(refused)?.code).toBe('VALIDATION_FAILED');
    }
    const unknown = await v2Request(simulator, '/v2/merge-queues/mq_nope/verification-runs');
    expect([unknown.status, errorOf(unknown)?.code]).toEqual([404, 'MERGE_QUEUE_NOT_FOUND']);
    const noRun = await v2Request(
      simulator,
      '/v2/merge-queue-verification-runs/00000000-0000-4000-8000-000000000000',
    );
    expect([noRun.status, errorOf(noRun)?.code]).toEqual([404, 'VERIFICATION_RUN_NOT_FOUND']);
  });

  it('page without skipping or repeating a run while new ones start', async () => {
    const simulator = await startV2Simulator({ seed: 5 });
    const { world } = simulator;
    world.advance(world.now() + 3 * 3600);
    for (const queueId of (await getPage(simulator, '/v2/merge-queues')).data.map((q) => q.id)) {
      const path = `/v2/merge-queues/${String(queueId)}/verification-runs?createdAfter=${iso(world.now() - 3600)}`;
      const before = (await getPage(simulator, `${path}&limit=100`)).data.map((row) => row.id);
      // Five simulated minutes between pages: runs start and conclude meanwhile.
      const { rows } = await walk(simulator, `${path}&limit=3`, () => {
        world.advance(world.now() + 300);
      });
      expect(rows.map((row) => row.id)).toEqual(before);
    }
  });

  it('of a pull request: every run that tested it, newest first, and no createdAfter', async () => {
    const simulator = await startV2Simulator({ seed: 3 });
    simulator.world.advance(simulator.world.now() + 3 * 3600);
    const { runs } = await allRuns(simulator);
    const batch = runs.find(({ run }) => run.testedPullRequests.length > 1)?.run;
    const pr = batch?.testedPullRequests[1];
    if (pr === undefined) throw new Error('no batch');
    const { rows, pages } = await walk(
      simulator,
      `/v2/pull-requests/${pr.id}/verification-runs?limit=2`,
    );
    // "Lists every verification run that tested this pull request, newest first — including a run
    // it shared with others".
    expect(rows.map((row) => row.id)).toEqual(
      runs
        .filter(({ run }) => run.testedPullRequests.some((tested) => tested.id === pr.id))
        .map(({ run }) => run.id),
    );
    expect(rows.map((row) => row.id)).toContain(batch?.id);
    // "`createdAfter` is not served on this endpoint at all and is rejected with `400` whatever
    // the value".
    const refused = await v2Request(
      simulator,
      `/v2/pull-requests/${pr.id}/verification-runs?createdAfter=${iso(0)}`,
    );
    expect([refused.status, errorOf(refused)?.code]).toEqual([400, 'VALIDATION_FAILED']);
    const unknown = await v2Request(
      simulator,
      '/v2/pull-requests/00000000-0000-4000-8000-000000000000/verification-runs',
    );
    expect([unknown.status, errorOf(unknown)?.code]).toEqual([404, 'PR_NOT_FOUND']);
    const malformed = await v2Request(simulator, '/v2/pull-requests/42/verification-runs');
    expect(malformed.status).toBe(400);
    // Counted per endpoint, as every read: the walk's pages and the three refused.
    expect(simulator.requestCounts()['/v2/pull-requests/{id}/verification-runs']).toBe(pages + 3);
  });
});

// Queue flow end to end: poll jobs over the real TrunkClient against the simulator (frozen, moved
// only by world.advance), the store's ledgers, and the metrics rendered from them. Expected counts
// come from the world itself: its event statistics, and its own answers at each poll.
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { ExporterConfig, RepositoryTarget } from '../../../src/config/types.js';
import type { QueueFlow } from '../../../src/snapshot/queueFlowTypes.js';
import { createRegistry, registerExporterMetrics } from '../../../src/metrics/index.js';
import { configuredTargets } from '../../../src/config/targets.js';
import { buildPollJobs } from '../../../src/poller/jobs/targetJobs.js';
import type { SimulatorFlavour } from '../../../src/simulator/responses.js';
import type { SimulatorWorld } from '../../../src/simulator/world.js';
import { SnapshotStore } from '../../../src/snapshot/store.js';
import type { Target } from '../../../src/snapshot/types.js';
import type { RepoRef } from '../../../src/trunk/schemas.js';
import { MetricsPage } from '../../../src/metrics/metricsPage.js';
import { renderPage } from '../../metrics/page.js';
import { parseExposition, sum } from '../../support/exposition.js';
import { exporterConfig } from '../../support/exporterConfig.js';
import { startTestSimulator } from '../../support/simulator.js';
import {
  TOKEN,
  capturingLogger,
  cleanUp,
  makeClient,
  sendText,
  startApiServer,
} from '../../trunk/harness.js';

afterEach(cleanUp);

const STEP = 5;
const WEB: RepoRef = { host: 'github.com', owner: 'acme', name: 'web' };
const WEB_NAME = 'github.com/acme/web';
const WEB_MAIN: Target = { kind: 'merge_queue', repo: WEB_NAME, branch: 'main' };

/** An exporter's polling half (jobs and store) with the world's clock, run by hand. */
function watcher(world: SimulatorWorld, config: ExporterConfig) {
  const { client } = makeClient(config.trunk.apiUrl, { retry: { maxAttempts: 1 } });
  const store = new SnapshotStore(config.polling.staleAfterSeconds, () => world.now());
  store.setTargets(configuredTargets(config));
  const { logger, lines } = capturingLogger();
  const jobs = buildPollJobs({ config, reader: client, store, logger, now: () => world.now() });
  return {
    store,
    logLines: lines,
    pollAll: () => Promise.all(jobs.map((job) => job.run(new AbortController().signal))),
    flow: (target: Target = WEB_MAIN): QueueFlow => {
      const flow = store.queueFlow(target);
      if (flow === undefined) throw new Error('no flow ledger yet');
      return flow;
    },
  };
}

function allQueues(world: SimulatorWorld): RepositoryTarget[] {
  return world.repositories.map((repository) => {
    const name = `${repository.host}/${repository.owner}/${repository.name}`;
    return {
      repo: { host: repository.host, owner: repository.owner, name: repository.name },
      name,
      branches: repository.branches,
      flakyTests: false,
    };
  });
}

const webMainOnly: RepositoryTarget[] = [
  { repo: WEB, name: WEB_NAME, branches: ['main'], flakyTests: false },
];

function exits(flow: QueueFlow): Record<string, number> {
  return Object.fromEntries(flow.counts.exited);
}

/** PR numbers in the world's web/main queue now. */
function queuedNow(world: SimulatorWorld): number[] {
  const answer = world.getQueue(WEB, 'main');
  if (!answer.ok) throw new Error(answer.message);
  return answer.body.enqueuedPullRequests.map((pr) => pr.prNumber);
}

/** Outcomes, per the world, of the PRs in `before` that are not in `after`. */
function departures(world: SimulatorWorld, before: number[], after: number[]) {
  const counts: Record<string, number> = { merged: 0, failed: 0, cancelled: 0, unknown: 0 };
  for (const number of before.filter((n) => !after.includes(n))) {
    const answer = world.getSubmittedPullRequest(WEB, 'main', number);
    const state = answer.ok ? answer.body.state : 'unknown';
    counts[state] = (counts[state] ?? 0) + 1;
  }
  return counts;
}

describe('queue flow against the simulator, polled at every step', () => {
  it('sees exactly the transitions, exits and queue states the world went through', async () => {
    // Seed 31 has merges, failures, cancellations, restarts and a pause within these 30 minutes.
    const { world, simulator } = await startTestSimulator({
      seed: 31,
      flavour: 'live',
      token: TOKEN,
    });
    const queues = allQueues(world);
    const config = exporterConfig(simulator.baseUrl, queues);
    const exporter = watcher(world, config);
    await exporter.pollAll();
    const before = world.statistics();

    const stateSeconds: Record<string, number> = {};
    for (let step = 0; step < 360; step++) {
      for (const repository of world.repositories) {
        for (const branch of repository.branches) {
          const answer = world.getQueue(repository, branch);
          if (!answer.ok) throw new Error(answer.message);
          stateSeconds[answer.body.state] = (stateSeconds[answer.body.state] ?? 0) + STEP;
        }
      }
      world.advance(world.now() + STEP);
      await exporter.pollAll();
    }
    const after = world.statistics();

    // What the world did: every transition, by from->to.
    const happened: Record<string, number> = {};
    for (const [key, count] of Object.entries(after.transitions)) {
      const delta = count - (before.transitions[key] ?? 0);
      if (delta > 0) happened[key] = delta;
    }
    const finished = (outcome: string) =>
      Object.entries(happened)
        .filter(([key]) => key.endsWith(`->${outcome}`))
        .reduce((total, [, count]) => total + count, 0);
    // The scenario exercises what it is about.
    expect(finished('merged')).toBeGreaterThan(0);
    expect(finished('failed')).toBeGreaterThan(0);
    expect(finished('cancelled')).toBeGreaterThan(0);
    expect(happened['testing->pending']).toBeGreaterThan(0);
    expect(stateSeconds.paused).toBeGreaterThan(0);

    // What the exporter saw, through its public metrics.
    const registry = createRegistry({ defaultMetrics: false });
    const { snapshotMetrics } = registerExporterMetrics({
      registry,
      store: exporter.store,
      version: 'test',
      mergeQueueIntervalSeconds: 30,
      flakyTestsIntervalSeconds: 300,
      topCodeowners: 20,
    });
    const samples = parseExposition(
      await renderPage(new MetricsPage({ registry, store: exporter.store, snapshotMetrics })),
    );
    const seenTransitions: Record<string, number> = {};
    for (const sample of samples) {
      if (sample.name !== 'trunk_merge_queue_state_transitions_total') continue;
      const key = `${sample.labels.from ?? ''}->${sample.labels.to ?? ''}`;
      seenTransitions[key] = (seenTransitions[key] ?? 0) + sample.value;
    }
    expect(seenTransitions).toEqual(happened);

    const exited = 'trunk_merge_queue_pull_requests_exited_total';
    for (const outcome of ['merged', 'failed', 'cancelled']) {
      expect(sum(samples, exited, { outcome })).toBe(finished(outcome));
      expect(sum(samples, 'trunk_merge_queue_time_in_queue_seconds_count', { outcome })).toBe(
        finished(outcome),
      );
    }
    expect(sum(samples, exited, { outcome: 'unknown' })).toBe(0);
    // Every transition observes the time spent in the state it left.
    const transitionCount = Object.values(happened).reduce((total, count) => total + count, 0);
    expect(sum(samples, 'trunk_merge_queue_time_in_state_seconds_count')).toBe(transitionCount);
    for (const [state, seconds] of Object.entries(stateSeconds)) {
      expect(sum(samples, 'trunk_merge_queue_state_seconds_total', { state })).toBe(seconds);
    }
    // One series per queue and outcome, whatever happened.
    expect(samples.filter((sample) => sample.name === exited)).toHaveLength(
      4 * queues.reduce((total, repository) => total + repository.branches.length, 0),
    );
  });
});

describe('queue flow across failures and restarts', () => {
  it('counts no exit on a failed poll, and the departures on the next successful one', async () => {
    const { world, simulator } = await startTestSimulator({ seed: 7, token: TOKEN });
    let failing = false;
    const proxy = await startApiServer(async (_req, res, _index, recorded) => {
      if (failing) {
        sendText(res, 503, 'upstream unavailable');
        return;
      }
      await forward(simulator.baseUrl, recorded.url, recorded.body, res);
    });
    const exporter = watcher(world, exporterConfig(proxy.apiUrl, webMainOnly));
    await exporter.pollAll();
    const first = queuedNow(world);
    const start = exporter.flow();

    world.advance(world.now() + 1800);
    failing = true;
    const requestsBefore = proxy.requests.length;
    await exporter.pollAll();
    expect(exporter.store.statuses()[0]?.up).toBe(false);
    // The failed getQueue is the only call: no lookups, and the ledger is untouched.
    expect(proxy.requests.length - requestsBefore).toBe(1);
    expect(exporter.flow()).toBe(start);
    expect(exits(exporter.flow())).toEqual({ merged: 0, failed: 0, cancelled: 0, unknown: 0 });

    world.advance(world.now() + 300);
    failing = false;
    await exporter.pollAll();
    const expected = departures(world, first, queuedNow(world));
    expect(expected.merged).toBeGreaterThan(0);
    expect(exits(exporter.flow())).toEqual(expected);
  });

  it('retries a failed exit lookup on the next poll instead of counting it', async () => {
    const { world, simulator } = await startTestSimulator({ seed: 7, token: TOKEN });
    let failLookupOf: number | undefined;
    const proxy = await startApiServer(async (_req, res, _index, recorded) => {
      const body = JSON.parse(recorded.body) as { pr?: { number?: number } };
      if (failLookupOf !== undefined && body.pr?.number === failLookupOf) {
        sendText(res, 500, 'internal error');
        return;
      }
      await forward(simulator.baseUrl, recorded.url, recorded.body, res);
    });
    const exporter = watcher(world, exporterConfig(proxy.apiUrl, webMainOnly));
    await exporter.pollAll();
    const first = queuedNow(world);
    world.advance(world.now() + 1800);
    const expected = departures(world, first, queuedNow(world));
    const departed = first.filter((number) => !queuedNow(world).includes(number));
    failLookupOf = departed[0];
    const unlucky = world.getSubmittedPullRequest(WEB, 'main', failLookupOf ?? 0);
    if (!unlucky.ok) throw new Error(unlucky.message);

    await exporter.pollAll();
    const withoutIt = {
      ...expected,
      [unlucky.body.state]: (expected[unlucky.body.state] ?? 0) - 1,
    };
    expect(exits(exporter.flow())).toEqual(withoutIt);
    expect([...exporter.flow().departed.keys()]).toEqual([failLookupOf]);
    expect(exporter.store.statuses()[0]?.up).toBe(true);
    expect(exporter.logLines.join('')).toContain('exit lookup failed');

    failLookupOf = undefined;
    world.advance(world.now() + STEP);
    const stillQueued = queuedNow(world);
    await exporter.pollAll();
    const later = departures(world, first, stillQueued);
    expect(exits(exporter.flow())).toEqual(later);
    expect(exporter.flow().departed.size).toBe(0);
  });

  it('counts nothing on the first poll of a restarted exporter, then only what left since', async () => {
    const { world, simulator } = await startTestSimulator({ seed: 11, token: TOKEN });
    const config = exporterConfig(simulator.baseUrl, webMainOnly);
    const old = watcher(world, config);
    await old.pollAll();
    world.advance(world.now() + 1800);
    await old.pollAll();
    expect(exits(old.flow()).merged).toBeGreaterThan(0);

    // The exporter restarts while PRs keep leaving: the new one has never seen them.
    world.advance(world.now() + 1800);
    const restarted = watcher(world, config);
    await restarted.pollAll();
    const firstSeen = queuedNow(world);
    expect(exits(restarted.flow())).toEqual({ merged: 0, failed: 0, cancelled: 0, unknown: 0 });
    expect(restarted.flow().counts.transitions.size).toBe(0);

    world.advance(world.now() + 1800);
    await restarted.pollAll();
    const expected = departures(world, firstSeen, queuedNow(world));
    expect(expected.merged).toBeGreaterThan(0);
    expect(exits(restarted.flow())).toEqual(expected);
  });

  it.each<SimulatorFlavour>(['documented', 'live'])(
    'with pullRequestDetails off (%s), makes no lookups and counts every exit as unknown',
    async (flavour) => {
      const { world, simulator } = await startTestSimulator({ seed: 7, flavour, token: TOKEN });
      const exporter = watcher(
        world,
        exporterConfig(simulator.baseUrl, webMainOnly, { polling: { pullRequestDetails: false } }),
      );
      await exporter.pollAll();
      const first = queuedNow(world);
      world.advance(world.now() + 1800);
      const gone = first.filter((number) => !queuedNow(world).includes(number)).length;
      await exporter.pollAll();
      expect(gone).toBeGreaterThan(0);
      expect(exits(exporter.flow())).toEqual({ merged: 0, failed: 0, cancelled: 0, unknown: gone });
      expect(simulator.requestCounts()['/v1/getSubmittedPullRequest']).toBeUndefined();
    },
  );
});

/** Passes a request on to the simulator and its answer back. */
async function forward(
  baseUrl: string,
  url: string,
  body: string,
  res: ServerResponse,
): Promise<void> {
  const upstream = await fetch(`${new URL(baseUrl).origin}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-token': TOKEN },
    body,
  });
  res.writeHead(upstream.status, {
    'content-type': upstream.headers.get('content-type') ?? 'text/plain',
  });
  res.end(await upstream.text());
}

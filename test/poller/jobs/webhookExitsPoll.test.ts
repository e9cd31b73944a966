// Exits counted once end to end: poll jobs over the real client against the simulator, and the
// simulator's own webhook bodies parsed by parseWebhookEvent and folded into the store as the
// exporter does, delivered at once, after the next poll, or never. Whatever the order, each exit
// the world made counts once; expected counts come from the world's statistics.
import { afterEach, describe, expect, it } from 'vitest';
import { configuredTargets } from '../../../src/config/targets.js';
import type { ExporterConfig, RepositoryTarget } from '../../../src/config/types.js';
import { applyMergeQueueEvent } from '../../../src/flow/queueEvents.js';
import { buildPollJobs } from '../../../src/poller/jobs/targetJobs.js';
import type { SimulatorStatistics } from '../../../src/simulator/statistics.js';
import { webhookPayloads } from '../../../src/simulator/webhookPayloads.js';
import { createSimulatorWorld, type SimulatorWorld } from '../../../src/simulator/world.js';
import { SnapshotStore } from '../../../src/snapshot/store.js';
import type { Target } from '../../../src/snapshot/types.js';
import { parseWebhookEvent } from '../../../src/trunk/webhookEvents.js';
import { exporterConfig } from '../../support/exporterConfig.js';
import { startTestSimulator } from '../../support/simulator.js';
import { TOKEN, capturingLogger, cleanUp, makeClient } from '../../trunk/harness.js';

afterEach(cleanUp);

const INTERVAL = 30;

type Delivery = 'at_once' | 'after_next_poll' | 'never';

/** An exporter's polling half with webhooks as the config says, its clock the world's plus `later`. */
function watcher(world: SimulatorWorld, config: ExporterConfig) {
  const clock = { later: 0 };
  const now = () => world.now() + clock.later;
  const { client } = makeClient(config.trunk.apiUrl, { retry: { maxAttempts: 1 } });
  const store = new SnapshotStore(config.polling.staleAfterSeconds, now);
  store.setTargets(configuredTargets(config));
  const jobs = buildPollJobs({
    config,
    reader: client,
    store,
    logger: capturingLogger().logger,
    now,
  });
  const pollAll = () => Promise.all(jobs.map((job) => job.run(new AbortController().signal)));
  const exited = (): Record<string, number> => {
    const totals: Record<string, number> = {};
    for (const target of configuredTargets(config)) {
      for (const [outcome, count] of store.queueFlow(target)?.counts.exited ?? []) {
        totals[outcome] = (totals[outcome] ?? 0) + count;
      }
    }
    return totals;
  };
  const bySource = (): Record<string, number> => {
    const totals: Record<string, number> = {};
    for (const target of configuredTargets(config)) {
      for (const [source, count] of store.queueFlow(target)?.exitStays?.bySource ?? []) {
        totals[source] = (totals[source] ?? 0) + count;
      }
    }
    return totals;
  };
  return { store, clock, now, pollAll, exited, bySource };
}

/** The world's webhooks, as the exporter's endpoint would fold them into the store. */
function deliverEvents(
  world: SimulatorWorld,
  exporter: ReturnType<typeof watcher>,
  delivery: Delivery,
): { afterPoll(): void } {
  let held: (() => void)[] = [];
  world.subscribe((worldEvent) => {
    for (const payload of webhookPayloads(worldEvent)) {
      const parsed = parseWebhookEvent(JSON.parse(JSON.stringify(payload.body)));
      if (!parsed.ok) throw new Error(`${payload.type} does not parse: ${parsed.problem}`);
      const { event } = parsed;
      if (event.kind === 'flaky_tests') continue;
      const target: Target = { kind: 'merge_queue', repo: event.repoName, branch: event.branch };
      const fold = () => {
        exporter.store.updateQueueFlow(target, (flow) =>
          applyMergeQueueEvent(flow, event, exporter.now(), { intervalSeconds: INTERVAL }),
        );
      };
      if (delivery === 'at_once') fold();
      else if (delivery === 'after_next_poll') held.push(fold);
    }
  });
  return {
    afterPoll() {
      const due = held;
      held = [];
      for (const fold of due) fold();
    },
  };
}

function allQueues(world: SimulatorWorld): RepositoryTarget[] {
  return world.repositories.map((repository) => ({
    repo: { host: repository.host, owner: repository.owner, name: repository.name },
    name: `${repository.host}/${repository.owner}/${repository.name}`,
    branches: repository.branches,
    flakyTests: false,
  }));
}

/** Exits into each final state the world made between two statistics. */
function worldExits(before: SimulatorStatistics, after: SimulatorStatistics) {
  const into = (outcome: string) =>
    Object.entries(after.transitions)
      .filter(([key]) => key.endsWith(`->${outcome}`))
      .reduce((total, [key, count]) => total + count - (before.transitions[key] ?? 0), 0);
  return {
    merged: into('merged'),
    failed: into('failed'),
    cancelled: into('cancelled'),
    unknown: 0,
  };
}

/**
 * Polls every 30 s for a simulated hour of heavy churn (PRs arrive most steps, and some are
 * cancelled within seconds, between two polls), delivering events as told; then lets held exits
 * fall due.
 */
async function run(seed: number, delivery: Delivery, webhooks = true) {
  const world = createSimulatorWorld({ seed, flavour: 'live', churn: 'heavy' });
  const { simulator } = await startTestSimulator({ world, token: TOKEN });
  const base = exporterConfig(simulator.baseUrl, allQueues(world));
  const config = { ...base, webhooks: { ...base.webhooks, enabled: webhooks } };
  const exporter = watcher(world, config);
  const events = deliverEvents(world, exporter, webhooks ? delivery : 'never');
  await exporter.pollAll();
  const before = world.statistics();
  for (let poll = 0; poll < 120; poll++) {
    world.advance(world.now() + INTERVAL);
    await exporter.pollAll();
    events.afterPoll();
  }
  const after = world.statistics();
  // The world stands still; the exporter's clock moves past every hold (2 × 30 s).
  for (const later of [INTERVAL, 2 * INTERVAL, 3 * INTERVAL]) {
    exporter.clock.later = later;
    await exporter.pollAll();
  }
  return { exporter, made: worldExits(before, after) };
}

describe('exits with webhooks, against the simulator', () => {
  it('counts every exit the world made once when each event arrives at once', async () => {
    const { exporter, made } = await run(31, 'at_once');
    // Heavy churn cancels most PRs; some still merge (failures: test/flow/exitStays.test.ts).
    expect(made.merged).toBeGreaterThan(0);
    expect(made.cancelled).toBeGreaterThan(10);
    expect(exporter.exited()).toEqual(made);
    const total = made.merged + made.failed + made.cancelled;
    expect(exporter.bySource()).toEqual({ event: total, poll: 0 });
  });

  it('counts every exit once when each event arrives after the poll that saw it gone', async () => {
    const { exporter, made } = await run(31, 'after_next_poll');
    expect(exporter.exited()).toEqual(made);
    const total = made.merged + made.failed + made.cancelled;
    expect(exporter.bySource()).toEqual({ event: total, poll: 0 });
  });

  it('without events, counts from the polls what a webhook-less exporter counts', async () => {
    const silent = await run(31, 'never');
    const polledOnly = await run(31, 'never', false);
    expect(silent.exporter.exited()).toEqual(polledOnly.exporter.exited());
    // Polls every 30 s miss the PRs that came and went in between.
    const seen = Object.values(polledOnly.exporter.exited()).reduce((a, b) => a + b, 0);
    const made = Object.values(polledOnly.made).reduce((a, b) => a + b, 0);
    expect(seen).toBeLessThan(made);
    expect(silent.exporter.bySource()).toEqual({ event: 0, poll: seen });
  });

  it('keeps an event that arrives while a poll looks up an exit: the poll folds into the ledger as it is then', async () => {
    const world = createSimulatorWorld({ seed: 31, flavour: 'live' });
    // The exit lookup of one departed PR is answered only when the test says so.
    const held: { prNumber: number | undefined; release?: () => void } = { prNumber: undefined };
    const { simulator } = await startTestSimulator({
      world,
      token: TOKEN,
      faults: {
        intercept: ({ path, body, response, answer }) => {
          const asked = (body as { pr?: { number?: unknown } }).pr?.number;
          if (!path.endsWith('/getSubmittedPullRequest') || asked !== held.prNumber) return false;
          held.release = () => {
            const reply = answer();
            response.writeHead(200, { 'Content-Type': 'application/json' });
            response.end(JSON.stringify(reply.ok ? reply.body : {}));
          };
          return true;
        },
      },
    });
    const [web] = allQueues(world);
    if (web === undefined) throw new Error('no repository');
    const webMain: RepositoryTarget = { ...web, branches: ['main'] };
    const base = exporterConfig(simulator.baseUrl, [webMain]);
    const exporter = watcher(world, { ...base, webhooks: { ...base.webhooks, enabled: true } });
    await exporter.pollAll();
    const queued = () => {
      const answer = world.getQueue(webMain.repo, 'main');
      if (!answer.ok) throw new Error(answer.message);
      return answer.body.enqueuedPullRequests.map((pr) => pr.prNumber);
    };
    const first = queued();
    while (first.every((prNumber) => queued().includes(prNumber))) {
      world.advance(world.now() + 5);
    }
    const departed = first.find((prNumber) => !queued().includes(prNumber));
    if (departed === undefined) throw new Error('no departure');
    held.prNumber = departed;

    const target: Target = { kind: 'merge_queue', repo: webMain.name, branch: 'main' };
    const parsed = parseWebhookEvent({
      type: 'pull_request.merged',
      pr_number: 999_999,
      repository: webMain.repo,
      target_branch: 'main',
      timestamp: new Date(world.now() * 1000).toISOString(),
    });
    if (!parsed.ok || parsed.event.kind === 'flaky_tests') throw new Error('event does not parse');
    const { event } = parsed;
    const polling = exporter.pollAll();
    const deadline = Date.now() + 20_000;
    while (held.release === undefined) {
      if (Date.now() > deadline) throw new Error('the exit lookup never came');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // The poll has read the ledger and waits for its lookup: now the event comes.
    expect(
      exporter.store.updateQueueFlow(target, (flow) =>
        applyMergeQueueEvent(flow, event, exporter.now(), { intervalSeconds: INTERVAL }),
      ),
    ).toBe(true);
    held.release();
    await polling;
    // The departed PR is held for its event; the one exit counted is the event's, kept.
    expect(exporter.bySource()).toEqual({ event: 1, poll: 0 });
    expect(exporter.exited()).toMatchObject({ merged: 1 });
  });
});

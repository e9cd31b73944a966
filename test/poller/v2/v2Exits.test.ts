// Exits through API v2 over real sockets against the simulator: poll jobs as the exporter builds
// them with an API key. The world stands still unless a test moves it, so the only exits are the
// ones a test makes: a PR submitted and failed between two polls, which no poll ever lists.
import { afterEach, describe, expect, it } from 'vitest';
import { configuredTargets } from '../../../src/config/targets.js';
import type { ExporterConfig, RepositoryTarget } from '../../../src/config/types.js';
import { applyMergeQueueEvent } from '../../../src/flow/queueEvents.js';
import { buildPollJobs } from '../../../src/poller/jobs/targetJobs.js';
import type { V2Readers } from '../../../src/poller/v2/v2Readers.js';
import {
  CONCLUDED_WINDOW_SLACK_SECONDS,
  PERIODIC_EXIT_READ_POLLS,
} from '../../../src/poller/v2/v2ExitLookup.js';
import { V2TestDirectory } from '../../../src/poller/v2/v2TestDirectory.js';
import { V2QueueDirectory } from '../../../src/poller/v2/v2QueueDirectory.js';
import { Secret } from '../../../src/secrets/secret.js';
import { webhookPayloads } from '../../../src/simulator/webhookPayloads.js';
import { READ_OVERLAP_SECONDS } from '../../../src/trunk/timestamps.js';
import type { SimulatedRepository } from '../../../src/simulator/repositories.js';
import type { RunningSimulator } from '../../../src/simulator/server.js';
import { createSimulatorWorld, type SimulatorWorld } from '../../../src/simulator/world.js';
import { SnapshotStore } from '../../../src/snapshot/store.js';
import type { Target } from '../../../src/snapshot/types.js';
import { TrunkV2Client } from '../../../src/trunk/v2Client.js';
import { parseWebhookEvent } from '../../../src/trunk/webhookEvents.js';
import { exporterConfig } from '../../support/exporterConfig.js';
import { WEB_QUEUE, entryRow, moveEntry } from '../../support/queueEntryRows.js';
import { startTestSimulator } from '../../support/simulator.js';
import { START, watchedQueue } from '../../support/v2QueuePolls.js';
import { TOKEN, capturingLogger, cleanUp, makeClient } from '../../trunk/harness.js';

afterEach(cleanUp);

const API_KEY = 'trunk_v2_exits-test-key';

type V2Reader = V2Readers['reader'];
const INTERVAL = 30;

/**
 * The poll jobs of an exporter with an API key and webhooks as told, for `targets` of the
 * simulator's world; its clock is the world's plus `clock.later`. `wrap` may observe the v2 reads.
 */
function v2PollJobs(
  world: SimulatorWorld,
  simulator: RunningSimulator,
  targets: readonly RepositoryTarget[],
  options: { webhooks: boolean; wrap?: (reader: V2Reader) => V2Reader },
) {
  const base = exporterConfig(simulator.origin, targets, {
    trunk: { apiKey: new Secret(API_KEY) },
  });
  const config: ExporterConfig = {
    ...base,
    webhooks: { ...base.webhooks, enabled: options.webhooks },
  };
  const clock = { later: 0 };
  const now = () => world.now() + clock.later;
  const { client } = makeClient(simulator.origin, {
    apiKey: new Secret(API_KEY),
    retry: { maxAttempts: 1 },
  });
  const v2 = new TrunkV2Client(client);
  const store = new SnapshotStore(config.polling.staleAfterSeconds, now);
  store.setTargets(configuredTargets(config));
  const jobs = buildPollJobs({
    config,
    reader: client,
    store,
    logger: capturingLogger().logger,
    now,
    v2: {
      reader: options.wrap?.(v2) ?? v2,
      directory: new V2QueueDirectory(v2, INTERVAL, now),
      tests: new V2TestDirectory({ lister: v2, maxAgeSeconds: 600, lookupsAtATime: 4 }, now),
    },
  });
  return { config, clock, now, store, jobs };
}

/** A repository of the world as a configured target. */
function targetOf(repository: SimulatedRepository, branches: readonly string[]): RepositoryTarget {
  return {
    repo: { host: repository.host, owner: repository.owner, name: repository.name },
    name: `${repository.host}/${repository.owner}/${repository.name}`,
    branches,
    flakyTests: false,
  };
}

/** One queue polled through API v2, its clock the world's plus `later`; records each exit read. */
async function v2Watcher(options: { webhooks: boolean }) {
  const { world, simulator } = await startTestSimulator({ seed: 5, token: TOKEN, apiKey: API_KEY });
  const [repository] = world.repositories;
  if (repository === undefined) throw new Error('no repository');
  const branch = repository.branches[0] ?? 'main';
  const queueTarget = targetOf(repository, [branch]);
  const { name } = queueTarget;
  /** concludedAfter of each exit read, with the poll it was made in. */
  const exitReads: { poll: number; concludedAfter: string }[] = [];
  /** Run once before the next exit read, after its poll's live read. */
  let beforeExitRead: (() => void) | undefined;
  let polls = 0;
  const recording = (v2: V2Reader): V2Reader => ({
    listTestingResults: (queue, since, readOptions) =>
      v2.listTestingResults(queue, since, readOptions),
    listVerificationRuns: (queue, createdAfter, readOptions) =>
      v2.listVerificationRuns(queue, createdAfter, readOptions),
    getVerificationRun: (queue, id, readOptions) => v2.getVerificationRun(queue, id, readOptions),
    listQueuePullRequests(queue, filter, readOptions) {
      // The read of the last merge at start (state=merged alone) is not an exit read.
      if (filter.concludedAfter !== undefined && filter.states === undefined) {
        exitReads.push({ poll: polls, concludedAfter: filter.concludedAfter });
        beforeExitRead?.();
        beforeExitRead = undefined;
      }
      return v2.listQueuePullRequests(queue, filter, readOptions);
    },
    reportAnomaly: (endpoint, kind, count) => {
      v2.reportAnomaly(endpoint, kind, count);
    },
  });
  const { clock, now, store, jobs } = v2PollJobs(world, simulator, [queueTarget], {
    webhooks: options.webhooks,
    wrap: recording,
  });
  const [job] = jobs;
  if (job === undefined) throw new Error('no job');
  const target: Target = { kind: 'merge_queue', repo: name, branch };
  /** One poll, the exporter's clock an interval on; the world stands still. */
  const poll = async () => {
    polls++;
    clock.later += INTERVAL;
    await job.run(new AbortController().signal);
    if (store.lastSnapshot(target) === undefined) throw new Error('the poll failed');
  };
  const exited = () => Object.fromEntries(store.queueFlow(target)?.counts.exited ?? []);
  const bySource = () => Object.fromEntries(store.queueFlow(target)?.exitStays?.bySource ?? []);
  const model = world.mergeQueues.find(
    (queue) => queue.repository === repository && queue.model.branch === branch,
  )?.model;
  if (model === undefined) throw new Error('no queue model');
  /**
   * A PR that enters and fails at once, between two polls, so no poll lists it: at the exporter's
   * time, as if the world had moved with it.
   */
  const failBetweenPolls = () => {
    const pr = model.submit(now());
    model.fail(pr, now());
    return pr.number;
  };
  const deliver = (prNumber: number, at: number) => {
    const parsed = parseWebhookEvent({
      type: 'pull_request.failed',
      pr_number: prNumber,
      repository: queueTarget.repo,
      target_branch: branch,
      timestamp: new Date(at * 1000).toISOString(),
    });
    if (!parsed.ok || parsed.event.kind === 'flaky_tests') throw new Error('no event');
    const { event } = parsed;
    store.updateQueueFlow(target, (flow) =>
      applyMergeQueueEvent(flow, event, now(), { intervalSeconds: INTERVAL }),
    );
  };
  /** The exporter's clock `seconds` on, the world standing still. */
  const later = (seconds: number) => {
    clock.later += seconds;
  };
  /**
   * Before the next exit read, the first PR the queue lists fails: after the poll's live read.
   * Returns a function that submits it again (same entry, as the simulator's authors do) and
   * moves it on to `pending`, past the `not_ready` where a poll would see a stay begin.
   */
  const failListedBeforeExitRead = () => {
    const [pr] = model.active;
    if (pr === undefined) throw new Error('no PR in the queue');
    beforeExitRead = () => {
      model.fail(pr, now());
    };
    return () => {
      model.resubmit(pr, now());
      model.place(pr, 'pending', now());
    };
  };
  return {
    now,
    poll,
    exitReads,
    exited,
    bySource,
    failBetweenPolls,
    failListedBeforeExitRead,
    deliver,
    later,
  };
}

/** Polls until the next periodic exit read has been made (and no further). */
async function pollThroughRead(watcher: Awaited<ReturnType<typeof v2Watcher>>) {
  const before = watcher.exitReads.length;
  for (let i = 0; i < PERIODIC_EXIT_READ_POLLS; i++) {
    await watcher.poll();
    if (watcher.exitReads.length > before) return;
  }
  throw new Error('no exit read');
}

describe('exits through API v2', () => {
  it('reads a quiet queue every PERIODIC_EXIT_READ_POLLS polls and no sooner', async () => {
    const watcher = await v2Watcher({ webhooks: false });
    await watcher.poll();
    for (let i = 0; i < 2 * PERIODIC_EXIT_READ_POLLS + 5; i++) await watcher.poll();
    expect(watcher.exitReads.map((read) => read.poll)).toEqual([
      1 + PERIODIC_EXIT_READ_POLLS,
      1 + 2 * PERIODIC_EXIT_READ_POLLS,
    ]);
  });

  it('counts a PR that entered and left between two polls once, with its outcome', async () => {
    const watcher = await v2Watcher({ webhooks: false });
    await watcher.poll();
    await pollThroughRead(watcher);
    const before = watcher.exited();
    watcher.failBetweenPolls();
    await pollThroughRead(watcher);
    expect(watcher.exited()).toEqual({ ...before, failed: (before.failed ?? 0) + 1 });
    // The next reads overlap the entry's conclusion: it counts nothing more.
    await pollThroughRead(watcher);
    await pollThroughRead(watcher);
    expect(watcher.exited()).toEqual({ ...before, failed: (before.failed ?? 0) + 1 });
  });

  it('counts once a PR that concludes after its poll listed it and before that poll read the concluded entries', async () => {
    const watcher = await v2Watcher({ webhooks: false });
    await watcher.poll();
    await pollThroughRead(watcher);
    const before = watcher.exited();
    // The poll's live read lists the PR in the queue; its exit read then lists its entry failed.
    // Trunk's two answers are of two instants: the next poll sees it gone, and one exit it is.
    watcher.failListedBeforeExitRead();
    await pollThroughRead(watcher);
    await watcher.poll();
    await pollThroughRead(watcher);
    expect(watcher.exited()).toEqual({ ...before, failed: (before.failed ?? 0) + 1 });
  });

  it('counts at the next poll a PR that concluded after its poll listed it and is back in the queue by then', async () => {
    const watcher = await v2Watcher({ webhooks: false });
    await watcher.poll();
    await pollThroughRead(watcher);
    const total = () => Object.values(watcher.exited()).reduce((sum, n) => sum + n, 0);
    const before = total();
    const submitAgain = watcher.failListedBeforeExitRead();
    await pollThroughRead(watcher);
    // Back and past `not_ready` before the next poll: no poll sees it leave or begin a stay.
    submitAgain();
    await watcher.poll();
    // One exit, by this poll. (Its outcome is what Trunk's testing results say of the entry, and
    // the simulator's scripted failure left none: `unknown`.)
    expect(total()).toBe(before + 1);
    await pollThroughRead(watcher);
    await pollThroughRead(watcher);
    expect(total()).toBe(before + 1);
  });

  it('continues each read from the previous one, with an overlap', async () => {
    const watcher = await v2Watcher({ webhooks: false });
    await watcher.poll();
    const startedAt = watcher.now();
    await pollThroughRead(watcher);
    watcher.failBetweenPolls();
    const concludedAt = watcher.now();
    await pollThroughRead(watcher);
    await pollThroughRead(watcher);
    const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
    // Just after the first poll (less the clocks' slack: that instant is the exporter's clock)
    // until a read sees an entry, then from the newest conclusion seen (Trunk's clock).
    expect(concludedAt - READ_OVERLAP_SECONDS).toBeGreaterThan(startedAt);
    expect(watcher.exitReads.map((read) => read.concludedAfter)).toEqual([
      iso(startedAt + 0.001 - CONCLUDED_WINDOW_SLACK_SECONDS),
      iso(startedAt + 0.001 - CONCLUDED_WINDOW_SLACK_SECONDS),
      iso(concludedAt - READ_OVERLAP_SECONDS),
    ]);
  });

  it('counts an exit its event and the read both saw once, whichever came first', async () => {
    const watcher = await v2Watcher({ webhooks: true });
    await watcher.poll();
    await pollThroughRead(watcher);
    const before = watcher.exited();
    // The event first: the read finds the exit counted.
    watcher.deliver(watcher.failBetweenPolls(), watcher.now());
    await pollThroughRead(watcher);
    expect(watcher.bySource()).toEqual({ event: 1, poll: 0 });
    // The read first: the event that comes after counts nothing.
    const late = watcher.failBetweenPolls();
    const lateAt = watcher.now();
    await pollThroughRead(watcher);
    watcher.deliver(late, lateAt);
    await watcher.poll();
    expect(watcher.bySource()).toEqual({ event: 1, poll: 1 });
    expect(watcher.exited()).toEqual({ ...before, failed: (before.failed ?? 0) + 2 });
  });
});

/**
 * Polls every queue of a heavy-churn world (PRs arrive most steps, some cancelled within seconds)
 * every 30 s for half an hour through API v2, with each webhook folded in as it happens or none;
 * then the world stands still until every queue has had its periodic read. Returns the exits
 * counted and those the world made.
 */
async function busyWorld(webhooks: boolean) {
  const world = createSimulatorWorld({ seed: 9, flavour: 'live', churn: 'heavy' });
  const { simulator } = await startTestSimulator({ world, token: TOKEN, apiKey: API_KEY });
  const targets = world.repositories.map((repository) => targetOf(repository, repository.branches));
  const { config, clock, now, store, jobs } = v2PollJobs(world, simulator, targets, { webhooks });
  const pollAll = () => Promise.all(jobs.map((job) => job.run(new AbortController().signal)));
  if (webhooks) {
    world.subscribe((worldEvent) => {
      for (const payload of webhookPayloads(worldEvent)) {
        const parsed = parseWebhookEvent(JSON.parse(JSON.stringify(payload.body)));
        if (!parsed.ok) throw new Error(`${payload.type} does not parse: ${parsed.problem}`);
        const { event } = parsed;
        if (event.kind === 'flaky_tests') continue;
        const target: Target = { kind: 'merge_queue', repo: event.repoName, branch: event.branch };
        store.updateQueueFlow(target, (flow) =>
          applyMergeQueueEvent(flow, event, now(), { intervalSeconds: INTERVAL }),
        );
      }
    });
  }
  await pollAll();
  const before = world.statistics();
  for (let poll = 0; poll < 60; poll++) {
    world.advance(world.now() + INTERVAL);
    await pollAll();
  }
  const after = world.statistics();
  // The world stands still until every queue has had its periodic read.
  for (let poll = 0; poll < PERIODIC_EXIT_READ_POLLS; poll++) {
    clock.later += INTERVAL;
    await pollAll();
  }
  const counted: Record<string, number> = {};
  for (const target of configuredTargets(config)) {
    for (const [outcome, count] of store.queueFlow(target)?.counts.exited ?? []) {
      counted[outcome] = (counted[outcome] ?? 0) + count;
    }
  }
  const made = (outcome: string) =>
    Object.entries(after.transitions)
      .filter(([key]) => key.endsWith(`->${outcome}`))
      .reduce((total, [key, count]) => total + count - (before.transitions[key] ?? 0), 0);
  return {
    counted,
    made: {
      merged: made('merged'),
      failed: made('failed'),
      cancelled: made('cancelled'),
      unknown: 0,
    },
  };
}

describe('exits through API v2 and webhooks over hours', () => {
  it('counts an exit its event counted once when the read that lists it comes seven hours later, even with the queue polled once before', async () => {
    const watcher = await v2Watcher({ webhooks: true });
    await watcher.poll();
    // Entered and failed before the queue's second poll, counted by its event; then thirty polls
    // 900 s apart (more than the six hours an exit is kept for late events) until the read.
    watcher.later(10);
    watcher.deliver(watcher.failBetweenPolls(), watcher.now());
    watcher.later(7 * 3600);
    await pollThroughRead(watcher);
    expect(watcher.bySource()).toEqual({ event: 1, poll: 0 });
  });
});

describe('exits through API v2 in a busy world', () => {
  it('counts every exit the world made once, those between two polls included', async () => {
    const { counted, made } = await busyWorld(false);
    expect(counted).toEqual(made);
  });

  it('with webhooks, counts every exit once whether its event or a read saw it first', async () => {
    const { counted, made } = await busyWorld(true);
    expect(counted).toEqual(made);
  });
});

describe('exits through API v2 after a window of more than 100 pages', () => {
  it('walks that window once, asks only from its poll on, counts the exits after it, and the PR it was for `unknown` once gone staleAfterSeconds', async () => {
    const [pr1, pr2, pr3] = [1, 2, 3].map((n) => entryRow(n, 'pending', START - 300));
    if (pr1 === undefined || pr2 === undefined || pr3 === undefined) throw new Error('no rows');
    const { logger, lines } = capturingLogger();
    const { fake, clock, store, poll } = await watchedQueue([pr1, pr2, pr3], { logger });
    await poll(); // START: the ledger starts
    // Twelve hours without a poll of a busy queue: 10,100 entries concluded (101 pages), #1 too.
    fake
      .entries(WEB_QUEUE)
      .push(
        ...Array.from({ length: 10_100 }, (_, index) =>
          entryRow(10_000 + index, 'merged', START + 1 + index * 4),
        ),
      );
    moveEntry(pr1, 'merged', START + 6 * 3600);
    const givenUpAt = START + 12 * 3600;
    clock.now = givenUpAt;
    const concludedAfter = () =>
      fake.requests
        .map((request) => new URL(request.url, 'http://fake').searchParams)
        // The exit reads' first pages (the read of the last merge at start asks for `state` too).
        .filter((q) => q.has('concludedAfter') && !q.has('state') && !q.has('cursor'))
        .map((q) => q.get('concludedAfter'));
    const calls: number[] = [];
    const pollCounting = async () => {
      calls.push((await poll()).filter((read) => read === 'concluded entries').length);
    };
    await pollCounting(); // #1 is gone: its window is walked to its bound, and given up
    moveEntry(pr2, 'merged', clock.now - 5); // #2 merges, seen gone by the next poll
    await pollCounting();
    // Entered and failed between two polls, which no poll lists.
    fake.entries(WEB_QUEUE).push(entryRow(99, 'failed', clock.now - 5));
    const target: Target = { kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' };
    const exited = () => Object.fromEntries(store.queueFlow(target)?.counts.exited ?? []);
    // Still looked up while gone less than staleAfterSeconds.
    while (clock.now < givenUpAt + 600) await pollCounting();
    expect(exited()).toEqual({ merged: 1, failed: 1, cancelled: 0, unknown: 0 });
    expect(store.queueFlow(target)?.departed.get(1)?.failedLookups).toBe(20);
    while (clock.now <= givenUpAt + 700) await pollCounting();

    const flow = store.queueFlow(target);
    // The window once, V2_MAX_WINDOW_PAGES pages; then one page a poll while #1 is looked up.
    expect(calls.slice(0, 3)).toEqual([100, 1, 1]);
    const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
    const asked = concludedAfter();
    expect(asked[0]).toBe(iso(START - 300 - CONCLUDED_WINDOW_SLACK_SECONDS));
    expect(asked[1]).toBe(iso(givenUpAt - CONCLUDED_WINDOW_SLACK_SECONDS));
    for (const after of asked.slice(1)) {
      expect(Date.parse(after ?? '') / 1000).toBeGreaterThanOrEqual(
        givenUpAt - CONCLUDED_WINDOW_SLACK_SECONDS,
      );
    }
    // #2 and #99 count as they left; #1, whose conclusion was in the window given up, `unknown`
    // once gone staleAfterSeconds (600 s), not kept as absent; none of the 10,100 counts.
    expect(exited()).toEqual({ merged: 1, failed: 1, cancelled: 0, unknown: 1 });
    expect(flow?.departed.size).toBe(0);
    expect(flow?.absent?.size ?? 0).toBe(0);
    const warning = lines.find((line) => line.includes('not counted'));
    expect(warning).toContain('"repo":"github.com/acme/web"');
    expect(warning).toContain('"branch":"main"');
    expect(warning).toContain('more than 100 pages');
    expect(warning).toContain(
      `concluded entries from ${iso(START - 300 - CONCLUDED_WINDOW_SLACK_SECONDS)} to ${iso(givenUpAt - CONCLUDED_WINDOW_SLACK_SECONDS)} are not counted`,
    );
    expect(warning).not.toContain('trunk_v2_queue-polls-key');
  }, 60_000);
});

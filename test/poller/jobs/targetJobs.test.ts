// configuredTargets and buildPollJobs: which targets a configuration yields, and that each job's
// run() records its own outcome in the SnapshotStore over the real TrunkClient, so one broken target
// (a repository the API does not know) fails alone and no failure carries the API token.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { RepositoryTarget } from '../../../src/config/types.js';
import { configuredTargets } from '../../../src/config/targets.js';
import { buildPollJobs } from '../../../src/poller/jobs/targetJobs.js';
import { TrunkV2Client } from '../../../src/trunk/v2Client.js';
import { V2QueueDirectory } from '../../../src/poller/v2/v2QueueDirectory.js';
import { V2TestDirectory } from '../../../src/poller/v2/v2TestDirectory.js';
import { Secret } from '../../../src/secrets/secret.js';
import { SnapshotStore } from '../../../src/snapshot/store.js';
import { targetKey, type Target, type TargetStatus } from '../../../src/snapshot/types.js';
import type { SimulatorWorld } from '../../../src/simulator/world.js';
import { exporterConfig } from '../../support/exporterConfig.js';
import { startTestSimulator } from '../../support/simulator.js';
import {
  TOKEN,
  capturingLogger,
  cleanUp,
  makeClient,
  sendJson,
  sendText,
  startApiServer,
} from '../../trunk/harness.js';

afterEach(cleanUp);

/** A queue's settings as getQueue answers them (the fixture without a state, given one below). */
const EMPTY_QUEUE = JSON.parse(
  readFileSync(
    join(
      import.meta.dirname,
      '..',
      '..',
      'trunk',
      'fixtures',
      'polling',
      'queue-without-state.json',
    ),
    'utf8',
  ),
) as Record<string, unknown>;

const TAKEN_AT = 1_767_261_600;

function repository(
  name: string,
  branches: readonly string[],
  flakyTests: boolean,
): RepositoryTarget {
  const [host = '', owner = '', repo = ''] = name.split('/');
  return { repo: { host, owner, name: repo }, name, branches, flakyTests };
}

const WEB = 'github.com/acme/web';
const API = 'github.com/acme/api';
const MOBILE = 'github.com/acme/mobile';
const GHOST = 'github.com/acme/ghost';

const queue = (repo: string, branch: string): Target => ({ kind: 'merge_queue', repo, branch });
const flaky = (repo: string): Target => ({ kind: 'flaky_tests', repo, branch: '' });

describe('configuredTargets', () => {
  it('lists every queue in configuration order, then each flaky-test repository once', () => {
    const config = exporterConfig('http://127.0.0.1:1/v1', [
      repository(MOBILE, ['develop'], true),
      repository(WEB, ['main', 'release'], true),
      repository(API, ['main'], false),
      // The same repository again for another branch: its quarantine list is still one target.
      repository(WEB, ['hotfix'], true),
    ]);

    expect(configuredTargets(config)).toEqual([
      queue(MOBILE, 'develop'),
      queue(WEB, 'main'),
      queue(WEB, 'release'),
      queue(API, 'main'),
      queue(WEB, 'hotfix'),
      flaky(MOBILE),
      flaky(WEB),
    ]);
  });

  it('builds one job per target, keyed by target, with the interval of its kind', () => {
    const config = exporterConfig('http://127.0.0.1:1/v1', [
      repository(WEB, ['main', 'release'], true),
      repository(API, ['main'], false),
    ]);
    const { client } = makeClient(config.trunk.apiUrl);
    const jobs = buildPollJobs({
      config,
      reader: client,
      store: new SnapshotStore(600),
      logger: capturingLogger().logger,
    });

    expect(jobs.map((job) => [job.key, job.intervalSeconds])).toEqual([
      [targetKey(queue(WEB, 'main')), 30],
      [targetKey(queue(WEB, 'release')), 30],
      [targetKey(queue(API, 'main')), 30],
      [targetKey(flaky(WEB)), 300],
    ]);
  });
});

describe('buildPollJobs for many quarantine lists', () => {
  it("reads each repository's settings a few times, not once per other repository", () => {
    const count = 2000;
    let flakyTestsReads = 0;
    // Each repository counts the reads of its flakyTests: building a list's poll once walked every
    // repository to find which shard exports the test collections, 10,000 repositories taking a
    // reload 15 s of the one thread while scrapes waited.
    const repositories = Array.from({ length: count }, (_unused, index) => {
      const counted = repository(`github.com/acme/repo-${String(index)}`, [], true);
      return Object.defineProperty({ ...counted }, 'flakyTests', {
        get: () => {
          flakyTestsReads += 1;
          return true;
        },
      });
    });
    const config = exporterConfig('http://127.0.0.1:1', repositories, {
      trunk: { apiKey: new Secret('trunk_v2_many-lists') },
    });
    const { client } = makeClient(config.trunk.apiUrl, {
      apiKey: new Secret('trunk_v2_many-lists'),
    });
    const v2 = new TrunkV2Client(client);

    const jobs = buildPollJobs({
      config,
      reader: client,
      store: new SnapshotStore(600),
      logger: capturingLogger().logger,
      v2: {
        reader: v2,
        directory: new V2QueueDirectory(v2, 30),
        tests: new V2TestDirectory({ lister: v2, maxAgeSeconds: 600, lookupsAtATime: 4 }),
      },
    });

    expect(jobs).toHaveLength(count);
    expect(flakyTestsReads).toBeLessThanOrEqual(10 * count);
  });
});

interface Run {
  readonly world: SimulatorWorld;
  readonly store: SnapshotStore;
  readonly logLines: string[];
  readonly statuses: ReadonlyMap<string, TargetStatus>;
}

/** Runs every job of `targets` once, concurrently, against a fresh simulator (documented shape). */
async function runOnceAgainstSimulator(targets: readonly RepositoryTarget[]): Promise<Run> {
  const { world, simulator } = await startTestSimulator({ seed: 42, token: TOKEN });
  const config = exporterConfig(simulator.baseUrl, targets);
  const { client } = makeClient(simulator.baseUrl);
  const store = new SnapshotStore(600, () => TAKEN_AT);
  store.setTargets(configuredTargets(config));
  const { logger, lines } = capturingLogger();
  const jobs = buildPollJobs({ config, reader: client, store, logger, now: () => TAKEN_AT });

  // A job records its failure; it never rejects (the scheduler would only log it).
  await Promise.all(jobs.map((job) => job.run(new AbortController().signal)));

  const statuses = new Map(store.statuses().map((status) => [targetKey(status.target), status]));
  return { world, store, logLines: lines, statuses };
}

function statusOf(run: Run, target: Target): TargetStatus {
  const status = run.statuses.get(targetKey(target));
  if (status === undefined) throw new Error(`no status for ${targetKey(target)}`);
  return status;
}

function expectSucceeded(run: Run, target: Target): void {
  const status = statusOf(run, target);
  expect(status).toMatchObject({
    up: true,
    lastError: undefined,
    lastSuccessAt: TAKEN_AT,
    lastAttemptAt: TAKEN_AT,
  });
  expect(status.snapshot).toMatchObject({ kind: target.kind, repo: target.repo });
  const repo = run.world.repositories.find(
    (candidate) => `${candidate.host}/${candidate.owner}/${candidate.name}` === target.repo,
  );
  if (repo === undefined) throw new Error(`simulator has no ${target.repo}`);
  const snapshot = status.snapshot;
  if (snapshot?.kind === 'merge_queue') {
    const answer = run.world.getQueue(repo, target.branch);
    if (!answer.ok) throw new Error(answer.message);
    expect(snapshot.branch).toBe(target.branch);
    expect(snapshot.pullRequests.map((pr) => pr.number)).toEqual(
      answer.body.enqueuedPullRequests.map((pr) => pr.prNumber),
    );
  } else if (snapshot?.kind === 'flaky_tests') {
    const answer = run.world.listQuarantinedTests(repo, 100, '');
    if (!answer.ok) throw new Error(answer.message);
    expect(snapshot.quarantine?.count).toBe(answer.body.page.total_rows);
  }
}

function expectNoToken(run: Run): void {
  const dumped = inspect(run.store.statuses(), { depth: null });
  expect(dumped).not.toContain(TOKEN);
  for (const line of run.logLines) expect(line).not.toContain(TOKEN);
}

describe('buildPollJobs against the simulator', () => {
  it('records a successful snapshot for every target after one run of each job', async () => {
    const run = await runOnceAgainstSimulator([
      repository(WEB, ['main', 'release'], true),
      repository(API, ['main'], false),
      repository(MOBILE, ['develop'], true),
    ]);

    expect(run.statuses.size).toBe(6);
    for (const target of [
      queue(WEB, 'main'),
      queue(WEB, 'release'),
      queue(API, 'main'),
      queue(MOBILE, 'develop'),
      flaky(WEB),
      flaky(MOBILE),
    ]) {
      expectSucceeded(run, target);
    }
    expect(run.store.allPolledOnce()).toBe(true);
    expectNoToken(run);
  });

  it('records a failure naming the endpoint and repository for an unknown repository, and only for it', async () => {
    const run = await runOnceAgainstSimulator([
      repository(WEB, ['main'], true),
      repository(GHOST, ['main'], true),
      repository(API, ['main'], true),
    ]);

    expectSucceeded(run, queue(WEB, 'main'));
    expectSucceeded(run, queue(API, 'main'));
    expectSucceeded(run, flaky(WEB));
    expectSucceeded(run, flaky(API));

    const ghostQueue = statusOf(run, queue(GHOST, 'main'));
    expect(ghostQueue).toMatchObject({ up: false, snapshot: undefined, lastAttemptAt: TAKEN_AT });
    expect(ghostQueue.lastError).toContain('getQueue');
    expect(ghostQueue.lastError).toContain(`${GHOST} branch main`);
    expect(ghostQueue.lastError).toContain('HTTP 404');

    const ghostList = statusOf(run, flaky(GHOST));
    expect(ghostList).toMatchObject({ up: false, snapshot: undefined });
    expect(ghostList.lastError).toContain('flaky-tests/list-quarantined-tests');
    expect(ghostList.lastError).toContain(GHOST);
    expect(ghostList.lastError).toContain('HTTP 404');

    // Each failure is logged once, with its target.
    const warnings = run.logLines.filter((line) => line.includes('poll failed'));
    expect(warnings).toHaveLength(2);
    for (const line of warnings) expect(line).toContain(GHOST);
    expectNoToken(run);
  });
});

describe('buildPollJobs failures', () => {
  it('keeps the token out of the store and the log even when the API echoes it', async () => {
    // An API (or proxy) that quotes the credential back in its error body.
    const server = await startApiServer((_req, res, _index, recorded) => {
      const presented = String(recorded.headers['x-api-token']);
      sendText(res, 401, `invalid API token "${presented}" for ${recorded.url}`);
    });
    const config = exporterConfig(server.apiUrl, [repository(WEB, ['main'], true)]);
    const { client } = makeClient(server.apiUrl);
    const store = new SnapshotStore(600, () => TAKEN_AT);
    store.setTargets(configuredTargets(config));
    const { logger, lines } = capturingLogger();
    const jobs = buildPollJobs({ config, reader: client, store, logger, now: () => TAKEN_AT });

    await Promise.all(jobs.map((job) => job.run(new AbortController().signal)));

    // The fake did see the token, so the body it sent back contained it.
    expect(server.requests.map((request) => request.headers['x-api-token'])).toContain(TOKEN);
    const statuses = store.statuses();
    expect(statuses.map((status) => status.up)).toEqual([false, false]);
    for (const status of statuses) {
      expect(status.lastError).not.toContain(TOKEN);
      expect(status.lastError).toContain('HTTP 401');
      expect(status.lastError).toContain('<redacted>');
    }
    expect(inspect(statuses, { depth: null })).not.toContain(TOKEN);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toContain(TOKEN);
  });

  it('polls a merge queue while more quarantine lists than the polls at once hang on their reads', async () => {
    // Every quarantine list's walk hangs (the organization's test lists of a large organization);
    // the queue's getQueue is answered at once, an empty queue.
    const server = await startApiServer((req, res) => {
      if (req.url?.includes('getQueue') !== true) return;
      sendJson(res, 200, { ...EMPTY_QUEUE, state: 'RUNNING', enqueuedPullRequests: [] });
    });
    const lists = Array.from({ length: 40 }, (_, index) =>
      repository(`github.com/acme/tests-${String(index)}`, [], true),
    );
    // Request slots to spare (64, 20 polls at once): only the places of the polls run short.
    const config = exporterConfig(server.apiUrl, [...lists, repository(WEB, ['main'], false)], {
      trunk: { maxConcurrentRequests: 64 },
    });
    const { client } = makeClient(server.apiUrl, { maxConcurrentRequests: 64 });
    const store = new SnapshotStore(600, () => TAKEN_AT);
    store.setTargets(configuredTargets(config));
    const jobs = buildPollJobs({ config, reader: client, store, logger: capturingLogger().logger });
    const controller = new AbortController();
    const queueJob = jobs.find((job) => job.key === targetKey(queue(WEB, 'main')));
    if (queueJob === undefined) throw new Error('expected the queue job');
    // The lists start first, and take every place their kind has.
    let listsEnded = 0;
    const hanging = jobs
      .filter((job) => job !== queueJob)
      .map((job) =>
        job.run(controller.signal).finally(() => {
          listsEnded += 1;
        }),
      );
    await queueJob.run(controller.signal);
    // Polled while every list still hangs, not once their reads time out and give their places up.
    expect(listsEnded).toBe(0);
    const web = store.statuses().find((status) => status.target.repo === WEB);
    controller.abort();
    await Promise.allSettled(hanging);
    expect({ up: web?.up, error: web?.lastError }).toEqual({ up: true, error: undefined });
  });

  it('records nothing for a run that was aborted (shutdown is not a failure)', async () => {
    const server = await startApiServer(() => {
      // Never answers: only the abort can end the call.
    });
    const config = exporterConfig(server.apiUrl, [repository(WEB, ['main'], false)]);
    const { client } = makeClient(server.apiUrl);
    const store = new SnapshotStore(600, () => TAKEN_AT);
    store.setTargets(configuredTargets(config));
    const [job] = buildPollJobs({
      config,
      reader: client,
      store,
      logger: capturingLogger().logger,
    });
    if (job === undefined) throw new Error('expected one job');

    const controller = new AbortController();
    const running = job.run(controller.signal);
    setTimeout(() => {
      controller.abort();
    }, 50);
    await running;

    expect(store.statuses().map((status) => status.up)).toEqual([undefined]);
  });
});

describe('buildPollJobs and the request limiter', () => {
  it("shares the one connection between targets in turn: no getQueue waits for another poll's lookups", async () => {
    const { world, simulator } = await startTestSimulator({ seed: 42, token: TOKEN });
    const config = exporterConfig(simulator.baseUrl, [
      repository(WEB, ['main', 'release'], false),
      repository(API, ['main'], false),
    ]);
    // One request at a time, so the order the API sees is the order the limiter grants.
    const { client, observer } = makeClient(simulator.baseUrl, { maxConcurrentRequests: 1 });
    const store = new SnapshotStore(600, () => TAKEN_AT);
    store.setTargets(configuredTargets(config));
    const jobs = buildPollJobs({
      config,
      reader: client,
      store,
      logger: capturingLogger().logger,
      now: () => TAKEN_AT,
    });
    // The documented shape has no state in queue items: every enqueued PR is looked up.
    const queueLength = (repo: string, branch: string): number => {
      const found = world.repositories.find((r) => `${r.host}/${r.owner}/${r.name}` === repo);
      const answer = found === undefined ? undefined : world.getQueue(found, branch);
      if (answer?.ok !== true) throw new Error(`simulator has no queue ${repo} ${branch}`);
      return answer.body.enqueuedPullRequests.length;
    };
    const [first, second, third] = [
      queueLength(WEB, 'main'),
      queueLength(WEB, 'release'),
      queueLength(API, 'main'),
    ];
    expect(first).toBeGreaterThan(0);

    // All three polls ask for their queue in the same tick.
    await Promise.all(jobs.map((job) => job.run(new AbortController().signal)));

    const lookups = (count: number): string[] =>
      Array<string>(count).fill('getSubmittedPullRequest');
    // Each getQueue is the next call of its target's turn. Started polls first (the limiter before
    // targets took turns) sent the third getQueue only after every lookup of the first two polls.
    expect(observer.finished.map((call) => call.endpoint)).toEqual([
      'getQueue',
      'getQueue',
      'getQueue',
      ...lookups(first + second + third),
    ]);
    expect(store.statuses().every((status) => status.up === true)).toBe(true);
  });
});

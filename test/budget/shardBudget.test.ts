// The API budget of each shard against the calls it makes (issue 40 item 3): three real exporter
// processes, started as the chart starts them (one config, `--shard N --total-shards 3`), each
// against its own fake organization with the same content, so every call is counted for the shard
// that made it. The organization is built to the budget's assumptions (BUDGET_ASSUMPTIONS: 500
// quarantined and 100 flaky or broken tests per repository, fewer than 100 PRs per queue), so the
// estimate can be held to the counts; it is larger than any shard's share, and every shard reads
// it whole all the same: 150 queues (2 pages of 100) and one repository with tests (5 + 1 pages).
// Counts are held to the estimate from above only (never more calls than estimated, and at least
// one read of each list by every shard), so a busy machine, whose timers run late, fails nothing.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli, type RunningCli } from '../support/cli.js';
import { parseExposition, select } from '../support/exposition.js';
import { fixtureAt, startFakeV2, type FakeV2 } from '../support/fakeTrunkV2.js';
import { cleanUp } from '../trunk/harness.js';

const SHARDS = 3;
/** Seconds: every merge-queue poll and test-list walk, and discovery (which asks far more often). */
const INTERVAL = 1;
const DISCOVERY_INTERVAL = 0.25;
/** The seconds the calls are counted over, after every shard has read the organization once. */
const WINDOW = 5;

interface Row {
  readonly [field: string]: unknown;
}

function firstRow(fixture: string): Row {
  return (fixtureAt(fixture) as { data: Row[] }).data[0] as Row;
}

/** The repositories discovery polls, each with queues on main and release; r0 has tests. */
const WATCHED = ['r0', 'r1', 'r2'];

function organization() {
  const queue = firstRow('merge-queues-of-an-organization.json');
  const queueOf = (name: string, branch: string, index: number): Row => ({
    ...queue,
    id: `queue${index}`,
    repositoryUrl: `https://github.com/acme/${name}`,
    targetBranch: branch,
  });
  const watched = WATCHED.flatMap((name) => [
    [name, 'main'],
    [name, 'release'],
  ]);
  // 144 queues of repositories discovery leaves alone (its repos glob is github.com/acme/r*).
  const others = Array.from({ length: 144 }, (_, index) => [`other${index}`, 'main']);
  const queues = [...watched, ...others].map(([name = '', branch = ''], index) =>
    queueOf(name, branch, index),
  );
  const test = firstRow('tests-flaky-and-broken-besides-quarantined.json');
  // The definition: quarantineState is "derived from the test's status, its collection's
  // quarantine settings and any per-test override": a quarantined test may be healthy, so the
  // quarantined and the flaky-or-broken lists can be sized apart, 500 and 100 tests of r0.
  const tests = [
    ...Array.from({ length: 500 }, (_, index) => ({
      ...test,
      id: `quarantined-${index}`,
      repoId: 'repo-0',
      status: 'healthy',
      quarantineState: 'quarantined',
    })),
    ...Array.from({ length: 100 }, (_, index) => ({
      ...test,
      id: `unhealthy-${index}`,
      repoId: 'repo-0',
      status: index % 2 === 0 ? 'flaky' : 'broken',
      quarantineState: 'notQuarantined',
    })),
  ];
  const repository = fixtureAt('repository-on-the-providers-default-host.json') as Row;
  const repositories = {
    'repo-0': { ...repository, id: 'repo-0', path: 'acme/r0', url: 'https://github.com/acme/r0' },
  };
  return { queues: { data: queues, nextCursor: null, hasMore: false }, tests, repositories };
}

function configFile(apiUrl: string): string {
  return [
    'trunk:',
    `  apiUrl: ${apiUrl}`,
    '  apiKey: trunk_v2_budget',
    '  maxRequestsPerSecond: 500',
    '  maxConcurrentRequests: 8',
    'server:',
    '  address: 127.0.0.1',
    '  port: 0',
    'polling:',
    `  mergeQueueIntervalSeconds: ${INTERVAL}`,
    `  flakyTestsIntervalSeconds: ${INTERVAL}`,
    'discovery:',
    '  enabled: true',
    `  intervalSeconds: ${DISCOVERY_INTERVAL}`,
    '  repos: ["github.com/acme/r*"]',
    '  flakyTests: true',
    'targets: []',
  ].join('\n');
}

const running: RunningCli[] = [];
afterEach(async () => {
  for (const cli of running.splice(0)) {
    cli.child.kill('SIGTERM');
    await cli.exit;
  }
  await cleanUp();
});

interface Shard {
  readonly fake: FakeV2;
  readonly cli: RunningCli;
  readonly url: string;
}

async function startShard(shard: number): Promise<Shard> {
  const fake = await startFakeV2(organization());
  const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-budget-'));
  const path = join(directory, 'config.yaml');
  await writeFile(path, configFile(fake.origin));
  const cli = startCli(['--config', path, '--shard', String(shard), '--total-shards', '3']);
  running.push(cli);
  return { fake, cli, url: await cli.url };
}

/** Waits until the shard has logged a budget sized by the organization's lists. */
async function untilSizedByLists(cli: RunningCli): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cli.stdout().includes("as the organization's lists named them")) {
    if (Date.now() > deadline) throw new Error(`no budget from the lists: ${cli.stdout()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Calls to each endpoint the fake answered from `from` to `to` (epoch ms). */
function callsBetween(fake: FakeV2, from: number, to: number): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const request of fake.requests) {
    if (request.receivedAt < from || request.receivedAt >= to) continue;
    const path = new URL(request.url, 'http://fake').pathname
      .replace(/^\/v2\//, 'v2/')
      .replace(/\/merge-queues\/[^/]+\//, '/merge-queues/{id}/')
      .replace(/\/repositories\/[^/]+$/, '/repositories/{id}');
    counts[path] = (counts[path] ?? 0) + 1;
  }
  return counts;
}

/** The ids of the queues whose pull requests the shard read. */
function queuesPolledBy(fake: FakeV2): Set<string> {
  return new Set(
    fake
      .requestsTo(/^\/v2\/merge-queues\/[^/]+\/pull-requests$/)
      .map((request) => new URL(request.url, 'http://fake').pathname.split('/')[3] ?? ''),
  );
}

async function budgetOf(shard: Shard): Promise<Record<string, number>> {
  const samples = parseExposition(await (await fetch(`${shard.url}/metrics`)).text());
  return Object.fromEntries(
    select(samples, 'trunk_exporter_api_budget_requests_per_second').map((sample) => [
      sample.labels.endpoint ?? '',
      sample.value,
    ]),
  );
}

describe('the API budget of each shard', () => {
  it(
    'counts the organization-wide reads every shard makes in full, and its own queues',
    { timeout: 60_000 },
    async () => {
      // One after another: three processes starting at once on a busy machine outwait startCli.
      const shards: Shard[] = [];
      for (let shard = 0; shard < SHARDS; shard += 1) shards.push(await startShard(shard));
      await Promise.all(shards.map(({ cli }) => untilSizedByLists(cli)));
      // The new targets' first polls (up to one interval later) read more than later ones do.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const from = Date.now();
      await new Promise((resolve) => setTimeout(resolve, WINDOW * 1_000));
      const to = Date.now();
      const seconds = (to - from) / 1000;

      for (const [ordinal, shard] of shards.entries()) {
        const budget = await budgetOf(shard);
        const calls = callsBetween(shard.fake, from, to);
        const expected = (endpoint: string) => (budget[endpoint] ?? 0) * seconds;
        const what = (endpoint: string) =>
          `shard ${ordinal} ${endpoint}: ${calls[endpoint] ?? 0} calls, estimated ${expected(endpoint)}`;

        // Every shard reads the organization whole, whatever its share of the targets: 2 pages of
        // queues and 5 + 1 pages of tests, each list at most once per interval, as its estimate says.
        expect(budget['v2/merge-queues']).toBeCloseTo(2 / INTERVAL, 9);
        expect(budget['v2/tests']).toBeCloseTo(6 / INTERVAL, 9);
        // And the calls: an organization-wide list is read at most once an interval, whoever asks
        // (poller/sharedRead.ts); a read may straddle the window's start (one read more). Each shard
        // read each list whole at least once in the window, a queue or a test list of its own or not.
        for (const [endpoint, pagesPerRead] of [
          ['v2/merge-queues', 2],
          ['v2/tests', 6],
        ] as const) {
          expect(calls[endpoint] ?? 0, what(endpoint)).toBeLessThanOrEqual(
            expected(endpoint) + pagesPerRead,
          );
          expect(calls[endpoint] ?? 0, what(endpoint)).toBeGreaterThanOrEqual(pagesPerRead);
        }

        // Its own queues: one pull-requests read per poll, a poll every 0.9–1.1 intervals (one more
        // at the window's start). No PR leaves, so no exit read (one every 30th poll at most) and no
        // testing-results read (but a queue's first, should its first poll come late), where the
        // estimate assumes exit reads on 9 % of polls and testing-results reads on 20 %.
        const queues = queuesPolledBy(shard.fake).size;
        expect(budget['v2/merge-queues/{id}/pull-requests']).toBeCloseTo(
          (queues * 1.09) / INTERVAL,
          9,
        );
        const pullRequests = calls['v2/merge-queues/{id}/pull-requests'] ?? 0;
        expect(pullRequests, what('pull-requests')).toBeLessThanOrEqual(
          (queues * seconds) / (0.9 * INTERVAL) + queues,
        );
        expect(pullRequests, what('pull-requests')).toBeGreaterThanOrEqual(queues);
        expect(calls['v2/merge-queues/{id}/testing-results'] ?? 0).toBeLessThanOrEqual(queues);
      }
      // The shards' own queues divide: the 6 discovered queues, each polled by one shard.
      const polled = shards.map(({ fake }) => [...queuesPolledBy(fake)]);
      expect(polled.flat().sort()).toEqual([
        'queue0',
        'queue1',
        'queue2',
        'queue3',
        'queue4',
        'queue5',
      ]);
    },
  );
});

// The queue-entry histories are read organization-wide, 50 pull requests of any queue a call; each
// shard must count only its own queues' pull requests, and the shards together what one unsharded
// exporter counts. Three queues of the fake organization (with three shards, one queue each), each
// moved by hand between two polls; the counts below follow from what each history says.
import { afterEach, describe, expect, it } from 'vitest';
import { record, recordTesting } from '../support/entryHistoryExporter.js';
import { select, sum, type Sample } from '../support/exposition.js';
import { configYaml, startTestExporter } from '../support/exporterHarness.js';
import { pageAt, startFakeV2, type EntryRow } from '../support/fakeTrunkV2.js';
import { entryRow, moveEntry, pullRequestIdOf } from '../support/queueEntryRows.js';
import { cleanUp } from '../trunk/harness.js';

afterEach(cleanUp);

const now = () => Date.now() / 1000;
const TOTAL_SHARDS = 3;
/** The queues of merge-queues-of-an-organization.json, by id. */
const QUEUES = {
  xK9mP2nQ: { repo: 'github.com/acme/web', branch: 'main' },
  aB3xY9kQ: { repo: 'github.com/acme/api', branch: 'main' },
  rT5uV7wX: { repo: 'github.com/acme/api', branch: 'release' },
};

/** Each queue's series of the "why" families, as `family{queue}{label}`: value, zeros left out. */
function whyCounts(pages: readonly (readonly Sample[])[]): Record<string, number> {
  const counts: Record<string, number> = {};
  const families: [string, string][] = [
    ['trunk_merge_queue_pull_requests_failed_total', 'reason'],
    ['trunk_merge_queue_pull_requests_cancelled_total', 'reason'],
    ['trunk_merge_queue_restarts_total', 'cause'],
    ['trunk_merge_queue_state_transitions_total', 'from,to'],
  ];
  for (const samples of pages) {
    for (const { repo, branch } of Object.values(QUEUES)) {
      for (const [name, labels] of families) {
        for (const sample of select(samples, name, { repo, branch })) {
          if (sample.value === 0) continue;
          const value = labels
            .split(',')
            .map((label) => sample.labels[label] ?? '')
            .join('->');
          const key = `${name.replace('trunk_merge_queue_', '')}{${repo}:${branch}}{${value}}`;
          counts[key] = (counts[key] ?? 0) + sample.value;
        }
      }
    }
  }
  return counts;
}

describe('queue-entry histories through sharded exporters', () => {
  it('are counted by the shard of each queue alone, and add up to one unsharded exporter’s counts', async () => {
    const start = now() - 600;
    const rows = (numbers: number[]): EntryRow[] =>
      numbers.map((n) => entryRow(n, 'testing', start));
    const web = rows([1, 2]);
    const apiMain = rows([11, 12]);
    const apiRelease = rows([21, 22]);
    const fake = await startFakeV2({
      queues: pageAt('merge-queues-of-an-organization.json'),
      entries: { xK9mP2nQ: web, aB3xY9kQ: apiMain, rT5uV7wX: apiRelease },
    });
    for (const number of [1, 2, 11, 12, 21, 22]) recordTesting(fake, number, start);
    const yaml = (shard: number, totalShards: number) =>
      [
        configYaml({
          apiUrl: fake.origin,
          token: null,
          apiKey: 'trunk_v2_sharded-why-key',
          targets:
            '  - repo: github.com/acme/web\n    branches: [main]\n  - repo: github.com/acme/api\n    branches: [main, release]',
          polling:
            '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600\n  staleAfterSeconds: 600',
          timeoutSeconds: 10,
        }),
        `sharding:\n  shard: ${String(shard)}\n  totalShards: ${String(totalShards)}`,
      ].join('\n');
    const unsharded = await startTestExporter(yaml(0, 1));
    const shards = await Promise.all(
      Array.from({ length: TOTAL_SHARDS }, (_, shard) =>
        startTestExporter(yaml(shard, TOTAL_SHARDS)),
      ),
    );
    const all = [unsharded, ...shards];
    const livePullRequests = (samples: readonly Sample[]) =>
      Object.values(QUEUES).reduce(
        (total, queue) => total + sum(samples, 'trunk_merge_queue_pull_requests', queue),
        0,
      );
    await unsharded.waitFor((samples) => livePullRequests(samples) === 6, 'six entries polled');
    for (const shard of shards) {
      await shard.waitFor((samples) => livePullRequests(samples) === 2, 'its two entries polled');
    }
    await new Promise((resolve) => setTimeout(resolve, 500));

    // Between two polls: web #1 times out; api main #11 times out and #12 is cancelled as its PR
    // closed; api release #21 is sent back to pending by a push to release and tested again.
    const at = now();
    record(fake, 1, 'failed', at - 2, 'TEST_RUN_TIMEOUT');
    moveEntry(web[0] as EntryRow, 'failed', at - 2);
    record(fake, 11, 'failed', at - 2, 'TEST_RUN_TIMEOUT');
    moveEntry(apiMain[0] as EntryRow, 'failed', at - 2);
    record(fake, 12, 'cancelled', at - 2, 'PR_CLOSED');
    moveEntry(apiMain[1] as EntryRow, 'cancelled', at - 2);
    record(fake, 21, 'pending', at - 3, 'MANUAL_PUSH_TO_TARGET_BRANCH');
    record(fake, 21, 'testing', at - 1, null);
    moveEntry(apiRelease[0] as EntryRow, 'testing', at - 1);

    const expected = {
      'pull_requests_failed_total{github.com/acme/web:main}{TEST_RUN_TIMEOUT}': 1,
      'pull_requests_failed_total{github.com/acme/api:main}{TEST_RUN_TIMEOUT}': 1,
      'pull_requests_cancelled_total{github.com/acme/api:main}{PR_CLOSED}': 1,
      'restarts_total{github.com/acme/api:release}{MANUAL_PUSH_TO_TARGET_BRANCH}': 1,
      'state_transitions_total{github.com/acme/web:main}{testing->failed}': 1,
      'state_transitions_total{github.com/acme/api:main}{testing->failed}': 1,
      'state_transitions_total{github.com/acme/api:main}{testing->cancelled}': 1,
      'state_transitions_total{github.com/acme/api:release}{testing->pending}': 1,
      'state_transitions_total{github.com/acme/api:release}{pending->testing}': 1,
    };
    for (const exporter of all) {
      await exporter.waitFor(
        (samples) =>
          sum(samples, 'trunk_merge_queue_restarts_total', QUEUES.rT5uV7wX) +
            sum(samples, 'trunk_merge_queue_pull_requests_cancelled_total', QUEUES.aB3xY9kQ) +
            sum(samples, 'trunk_merge_queue_pull_requests_failed_total', QUEUES.xK9mP2nQ) >=
          (exporter === unsharded ? 3 : 1),
        'its histories read',
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const pages = await Promise.all(all.map((exporter) => exporter.samples()));
    expect(whyCounts([pages[0] ?? []])).toEqual(expected);
    expect(whyCounts(pages.slice(1))).toEqual(expected);
    // Each shard asked only for its own queues' pull requests.
    const asked = fake
      .requestsTo(/^\/v2\/queue-entry-history$/)
      .flatMap((request) =>
        (new URL(request.url, 'http://fake').searchParams.get('pullRequestIds') ?? '').split(','),
      );
    expect(new Set(asked)).toEqual(new Set([1, 11, 12, 21].map(pullRequestIdOf)));
  });
});

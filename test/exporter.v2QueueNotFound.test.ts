// Merge queues whose pull-request list answers 404, through a real exporter holding an API key.
// Trunk's definition: `GET /v2/merge-queues/{id}/pull-requests` answers "404 `MERGE_QUEUE_NOT_FOUND`"
// (a queue deleted since the list named it, or re-created under another id), and `GET
// /v2/merge-queues` lists every queue of the organization "in one call rather than two". A 404 may
// send the exporter back to the list, but the list is the organization's: however many queues
// answer 404, it is read at most once per merge-queue interval as due and once more for them.
import { afterEach, describe, expect, it } from 'vitest';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import { fixtureAt, startFakeV2, type FixturePage } from './support/fakeTrunkV2.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const BRANCHES = ['b0', 'b1', 'b2', 'b3', 'b4', 'b5'];

/** Six queues of github.com/acme/api, one per branch, shaped as the fixture's `aB3xY9kQ`. */
function sixQueues(): FixturePage {
  const page = fixtureAt('merge-queues-of-an-organization.json') as FixturePage;
  const template = page.data.find((queue) => (queue as { id: string }).id === 'aB3xY9kQ');
  return {
    data: BRANCHES.map((branch, index) => ({
      ...(template as object),
      id: `nf${String(index)}xY9kQ`,
      targetBranch: branch,
    })),
    nextCursor: null,
    hasMore: false,
  };
}

describe('queues whose pull requests answer 404', () => {
  it('read the list of queues at most twice an interval, not once per queue a poll', async () => {
    const fake = await startFakeV2({ queues: sixQueues() });
    fake.fail(/^\/v2\/merge-queues\/[^/]+\/pull-requests$/, 404);
    const exporter = await startTestExporter(
      configYaml({
        apiUrl: fake.origin,
        token: null,
        apiKey: 'trunk_v2_not-found-key',
        targets: `  - repo: github.com/acme/api\n    branches: [${BRANCHES.join(', ')}]`,
        polling: [
          '  mergeQueueIntervalSeconds: 0.2',
          '  flakyTestsIntervalSeconds: 600',
          '  staleAfterSeconds: 600',
        ].join('\n'),
      }),
    );
    const listReads = () => fake.requestsTo(/^\/v2\/merge-queues$/).length;
    await exporter.waitFor(() => listReads() > 0, 'the first read of the list');
    const [readsBefore, startedAt] = [listReads(), Date.now()];
    // Ten polls of each queue at least (one or two reads of its pull requests each), every read
    // answered 404.
    const liveReads = (index: number) =>
      fake.requestsTo(new RegExp(`^/v2/merge-queues/nf${String(index)}xY9kQ/pull-requests$`))
        .length;
    while (BRANCHES.some((_, index) => liveReads(index) < 20)) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const [reads, intervals] = [listReads() - readsBefore, (Date.now() - startedAt) / 200];
    // Once per interval as due, and once more for the 404s of all six queues: never once per
    // queue's poll (six times an interval).
    expect(reads).toBeLessThanOrEqual(2 * Math.ceil(intervals) + 2);
  });
});

// The organization's queues named from `repositoryUrl` and `targetBranch`, which become the `repo`
// and `branch` labels of every family of the queue.
import { afterEach, describe, expect, it } from 'vitest';
import {
  V2QueueDirectory,
  queueListPageBound,
  repoNameOfUrl,
} from '../../../src/poller/v2/v2QueueDirectory.js';
import { Secret } from '../../../src/secrets/secret.js';
import { TrunkV2Client } from '../../../src/trunk/v2Client.js';
import { V2PagingError } from '../../../src/trunk/v2Paging.js';
import type { V2MergeQueue } from '../../../src/trunk/v2Schemas.js';
import { pageAt } from '../../support/fakeTrunkV2.js';
import { cleanUp, makeClient, rejectionOf, sendJson, startApiServer } from '../../trunk/harness.js';

afterEach(cleanUp);

describe('repoNameOfUrl', () => {
  it('names a repository host/owner/name from its url', () => {
    expect(repoNameOfUrl('https://github.com/acme/web')).toBe('github.com/acme/web');
    expect(repoNameOfUrl('https://gitlab.acme.internal:8443/platform/api.git')).toBe(
      'gitlab.acme.internal:8443/platform/api',
    );
  });

  it('names nothing from a url that is not host/owner/name, or whose owner or name is past 200 characters', () => {
    expect(repoNameOfUrl('https://github.com/acme')).toBeUndefined();
    expect(repoNameOfUrl('not a url')).toBeUndefined();
    expect(repoNameOfUrl(`https://github.com/${'a'.repeat(50_000)}/web`)).toBeUndefined();
    expect(repoNameOfUrl(`https://github.com/acme/${'w'.repeat(201)}`)).toBeUndefined();
    expect(repoNameOfUrl(`https://github.com/acme/${'w'.repeat(200)}`)).toBe(
      `github.com/acme/${'w'.repeat(200)}`,
    );
  });
});

describe('V2QueueDirectory', () => {
  it('leaves out a queue whose target branch is past 1,000 characters, and keeps the others', async () => {
    // The fixture's queues, and one more of github.com/acme/web on a branch of 200,000 characters.
    const queues = pageAt('merge-queues-of-an-organization.json').data as V2MergeQueue[];
    const [first] = queues;
    if (first === undefined) throw new Error('the fixture lists no queue');
    const long = { ...first, id: 'mq_long', targetBranch: 'b'.repeat(200_000) };
    const directory = new V2QueueDirectory(
      { listMergeQueues: () => Promise.resolve([...queues, long]) },
      60,
    );
    await directory.refresh();
    const branches = directory.latest().map(({ branch }) => branch);
    expect(branches).toHaveLength(queues.length);
    expect(branches.every((branch) => branch.length <= 1_000)).toBe(true);
  });

  it('leaves out a queue whose target branch is empty: the branch is a label, and an empty label value is, to Prometheus, no label', async () => {
    // `MergeQueue.targetBranch` is a string with no minLength in Trunk's definition.
    const queues = pageAt('merge-queues-of-an-organization.json').data as V2MergeQueue[];
    const [first] = queues;
    if (first === undefined) throw new Error('the fixture lists no queue');
    const told: [number, string][] = [];
    const directory = new V2QueueDirectory(
      {
        listMergeQueues: () =>
          Promise.resolve([...queues, { ...first, id: 'mq_no_branch', targetBranch: '' }]),
      },
      60,
      undefined,
      { onLeftOut: (count, firstId) => told.push([count, firstId]) },
    );
    await directory.refresh();
    expect(directory.latest().map(({ branch }) => branch)).not.toContain('');
    expect(directory.latest()).toHaveLength(queues.length);
    expect(told).toEqual([[1, 'mq_no_branch']]);
  });

  it('says how many queues a read left out, and which first, when that number changes', async () => {
    const queues = pageAt('merge-queues-of-an-organization.json').data as V2MergeQueue[];
    const [first] = queues;
    if (first === undefined) throw new Error('the fixture lists no queue');
    const long = { ...first, id: 'mq_long', targetBranch: 'b'.repeat(200_000) };
    const unnamed = { ...first, id: 'mq_unnamed', repositoryUrl: 'https://github.com/acme' };
    let listed = [...queues, long, unnamed];
    const told: [number, string][] = [];
    const directory = new V2QueueDirectory(
      { listMergeQueues: () => Promise.resolve(listed) },
      0,
      undefined,
      { onLeftOut: (count, firstId) => told.push([count, firstId]) },
    );
    await directory.refresh();
    directory.invalidate();
    await directory.refresh();
    listed = [...queues, unnamed];
    directory.invalidate();
    await directory.refresh();
    listed = queues;
    directory.invalidate();
    await directory.refresh();
    expect(told).toEqual([
      [2, 'mq_long'],
      [1, 'mq_unnamed'],
    ]);
  });

  it('polls one queue of two listed for one repository and branch, in whichever order the list comes', async () => {
    const queues = pageAt('merge-queues-of-an-organization.json').data as V2MergeQueue[];
    const [first] = queues;
    if (first === undefined) throw new Error('the fixture lists no queue');
    const a = { ...first, id: 'mq_a' };
    const b = { ...first, id: 'mq_b' };
    const key = { repo: repoNameOfUrl(first.repositoryUrl) ?? '', branch: first.targetBranch };
    let order = [a, b];
    const directory = new V2QueueDirectory({ listMergeQueues: () => Promise.resolve(order) }, 0);
    const firstFound = (await directory.find(key))?.id;
    order = [b, a];
    directory.invalidate();
    expect([firstFound, (await directory.find(key))?.id]).toEqual(['mq_a', 'mq_a']);
  });
});

describe("the organization's list of merge queues with discovery on", () => {
  const [queue] = pageAt('merge-queues-of-an-organization.json').data as V2MergeQueue[];
  if (queue === undefined) throw new Error('the fixture lists no queue');

  /**
   * A local Trunk whose list of queues has `pages` pages of 100 queues (each its own branch), each
   * with a new cursor; never ending when `pages` is Infinity.
   */
  async function queueList(pages: number) {
    const server = await startApiServer((req, res) => {
      const cursor = new URL(req.url ?? '/', 'http://x').searchParams.get('cursor');
      const page = cursor === null ? 1 : Number(cursor.slice('p'.length)) + 1;
      const data = Array.from({ length: 100 }, (_, row) => ({
        ...queue,
        id: `mq_${String(page)}_${String(row)}`,
        targetBranch: `release/${String(page)}.${String(row)}`,
      }));
      const last = page >= pages;
      sendJson(res, 200, { data, nextCursor: last ? null : `p${String(page)}`, hasMore: !last });
    }, '');
    const { client, observer } = makeClient(server.origin, {
      apiKey: new Secret('trunk_v2_k3y'),
      maxRequestsPerSecond: 1_000_000,
    });
    return { server, observer, lister: new TrunkV2Client(client) };
  }

  it.each([
    // docs/configuration.md: the pages of discovery.maxTargets queues (of 10,000 at least), at
    // 100 a page, and a tenth more: 100 + 10, 100 + 10, 200 + 20.
    { maxTargets: 10_000, pages: 110 },
    { maxTargets: 5, pages: 110 },
    { maxTargets: 20_000, pages: 220 },
  ])(
    'stops an endless list after $pages pages with maxTargets $maxTargets, naming the bound, and counts it',
    async ({ maxTargets, pages }) => {
      const { server, observer, lister } = await queueList(Infinity);
      const directory = new V2QueueDirectory(lister, 0, undefined, {
        bound: queueListPageBound(maxTargets),
      });
      const error = await rejectionOf(directory.refresh());
      expect(error).toBeInstanceOf(V2PagingError);
      expect(String(error)).toContain(
        `the list of merge queues (GET /v2/merge-queues): more than ${String(pages)} pages; ` +
          `stopped: with discovery on the list is read to ${String(pages * 100)} queues at most: ` +
          `discovery.maxTargets (${String(maxTargets)}), at least 10000, and a tenth more; ` +
          'raise discovery.maxTargets to read a longer list',
      );
      expect(server.requests).toHaveLength(pages);
      expect(observer.anomalies).toEqual([
        { endpoint: 'v2/merge-queues', kind: 'paging_stopped', count: 1 },
      ]);
      expect(directory.latest()).toEqual([]);
    },
  );

  it('never reads past the 1,000 pages of every v2 list, nor asks for a larger maxTargets there', () => {
    // 90,900 queues: 909 pages and a tenth (91) more reach 1,000.
    expect(queueListPageBound(90_900)).toEqual({
      pages: 1000,
      why: 'the list is read to 100000 queues at most, as every v2 list',
    });
    // 90,800 queues: 908 pages and 91 more, 999.
    expect(queueListPageBound(90_800).pages).toBe(999);
  });

  it('reads a list of 10,900 queues to its end with the default maxTargets, the margin above 10,000', async () => {
    const { server, lister } = await queueList(109);
    const directory = new V2QueueDirectory(lister, 0, undefined, {
      bound: queueListPageBound(10_000),
    });
    await directory.refresh();
    expect(server.requests).toHaveLength(109);
    expect(directory.latest()).toHaveLength(10_900);
  });
});

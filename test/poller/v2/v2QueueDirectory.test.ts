// The organization's queues named from `repositoryUrl` and `targetBranch`, which become the `repo`
// and `branch` labels of every family of the queue.
import { describe, expect, it } from 'vitest';
import { V2QueueDirectory, repoNameOfUrl } from '../../../src/poller/v2/v2QueueDirectory.js';
import type { V2MergeQueue } from '../../../src/trunk/v2Schemas.js';
import { pageAt } from '../../support/fakeTrunkV2.js';

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

// The organization's shared v2 lists over a real TrunkClient and a fake organization on loopback
// whose answers the test holds back (a slow upstream, its pace set by the test): a refresh asked
// for while a list is read leads to one more read after it, however many ask, and those who asked
// after the refresh get that read's answer (a status event's refresh of the test lists, a poll's
// 404 on a queue id re-reading the queue list); a poll with a deadline waits for a read in
// progress half its time at most, then has the last good list; a failed read of the queue list leaves the last
// good list in use until it is older than staleAfterSeconds.
import { afterEach, describe, expect, it } from 'vitest';
import { pollMergeQueueV2 } from '../../src/poller/v2/v2MergeQueuePoll.js';
import { V2QueueDirectory } from '../../src/poller/v2/v2QueueDirectory.js';
import { V2TestDirectory } from '../../src/poller/v2/v2TestDirectory.js';
import { Secret } from '../../src/secrets/secret.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import { fixtureAt, pageAt, startFakeV2, type FakeV2 } from '../support/fakeTrunkV2.js';
import { cleanUp, makeClient } from '../trunk/harness.js';

afterEach(cleanUp);

const WEB_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

function readerOf(fake: FakeV2): TrunkV2Client {
  const { client } = makeClient(fake.origin, {
    token: undefined,
    apiKey: new Secret('trunk_v2_shared-read-test'),
    retry: { maxAttempts: 1 },
  });
  return new TrunkV2Client(client);
}

/** Waits until `count` requests are held by the fake (each is a read that began). */
async function untilHeld(fake: FakeV2, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (fake.held() < count) {
    if (Date.now() > deadline) throw new Error(`never ${count} requests held`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const quarantinedListReads = (fake: FakeV2) =>
  fake
    .requestsTo(/^\/v2\/tests$/)
    .filter((request) => request.url.includes('quarantineState=quarantined')).length;

describe('a shared read', () => {
  it('reads once more after a refresh asked for during a read, however many ask, and gives that read to those who asked after', async () => {
    // acme/web has two quarantined tests (suite::test_23, suite::test_26): "quarantineState:
    // Filter on effective quarantine state" is what the quarantined list is read by.
    const tests = structuredClone(pageAt('tests-flaky-and-broken-besides-quarantined.json').data);
    const fake = await startFakeV2({
      tests,
      repositories: { [WEB_ID]: fixtureAt('repository-on-the-providers-default-host.json') },
    });
    const directory = new V2TestDirectory({
      lister: readerOf(fake),
      maxAgeSeconds: 600,
      lookupsAtATime: 4,
    });
    fake.hold(/^\/v2\/tests$/);
    const before = directory.quarantinedTestsOf('github.com/acme/web');
    await untilHeld(fake, 1);
    // An event says the list changed while its walk is under way: the walk's answer may predate it.
    directory.expire();
    const after = [1, 2, 3].map(() => directory.quarantinedTestsOf('github.com/acme/web'));
    fake.release();
    expect((await before).summary.count).toBe(2);
    // What the event said: Trunk un-quarantined suite::test_26.
    const unquarantined = tests.find(
      (test) => (test as { name: string }).name === 'suite::test_26',
    );
    (unquarantined as { quarantineState: string }).quarantineState = 'notQuarantined';
    await untilHeld(fake, 1);
    fake.release();
    // One read more, for the three that asked after the refresh: each sees one quarantined test.
    for (const answer of await Promise.all(after)) expect(answer.summary.count).toBe(1);
    expect(quarantinedListReads(fake)).toBe(2);
    fake.hold(undefined);
    // Nothing more is read within the interval.
    await directory.quarantinedTestsOf('github.com/acme/web');
    expect(quarantinedListReads(fake)).toBe(2);
  });

  it('reads the list of queues once more when a poll gets a 404 on a queue id while the list is being read', async () => {
    const fake = await startFakeV2({
      queues: pageAt('merge-queues-of-an-organization.json'),
      entries: { xK9mP2nQ: [] },
    });
    const clock = { now: 1000 };
    const reader = readerOf(fake);
    const directory = new V2QueueDirectory(reader, 30, () => clock.now, {
      staleAfterSeconds: 600,
      onFailure: () => undefined,
    });
    const list = /^\/v2\/merge-queues$/;
    const webEntries = /^\/v2\/merge-queues\/xK9mP2nQ\/pull-requests$/;
    const web = { repo: 'github.com/acme/web', branch: 'main' };
    expect((await directory.find(web))?.id).toBe('xK9mP2nQ');
    // A poll of acme/web main has its queue from the list and asks for its entries (held) ...
    fake.hold(/^\/v2\/merge-queues(\/xK9mP2nQ\/pull-requests)?$/);
    const poll = pollMergeQueueV2({
      reader,
      directory,
      repoName: web.repo,
      branch: web.branch,
      options: {},
      now: () => clock.now,
    });
    await untilHeld(fake, 1);
    // ... when the list, due again, is read for another poll (held) ...
    clock.now = 1031;
    const underWay = directory.find(web);
    await untilHeld(fake, 2);
    // ... and the entries answer 404 ("the queue may have been re-created"): the list read under
    // way may predate that, so the poll waits for one more read of the list, after it.
    fake.fail(webEntries, 404);
    fake.release(webEntries);
    while (fake.requestsTo(webEntries).length < 1 || fake.held() > 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // Time for the poll to take the 404 (nothing to observe of it: it waits on the list read).
    await new Promise((resolve) => setTimeout(resolve, 200));
    fake.recover();
    fake.release(list);
    await underWay;
    await untilHeld(fake, 1);
    fake.hold(undefined);
    fake.release();
    expect((await poll).queue.id).toBe('xK9mP2nQ');
    expect(fake.requestsTo(list)).toHaveLength(3);
  });

  it('leaves a poll with a deadline the last good list once half its time is spent waiting for a read, but waits for a refresh whole', async () => {
    const fake = await startFakeV2({ queues: pageAt('merge-queues-of-an-organization.json') });
    const clock = { now: 1000 };
    // A timeout far past the test's: the held read ends only when the test releases it.
    const { client } = makeClient(fake.origin, {
      token: undefined,
      apiKey: new Secret('trunk_v2_shared-read-test'),
      timeoutSeconds: 60,
    });
    const directory = new V2QueueDirectory(new TrunkV2Client(client), 30, () => clock.now, {
      staleAfterSeconds: 600,
      onFailure: () => undefined,
    });
    const list = /^\/v2\/merge-queues$/;
    const web = { repo: 'github.com/acme/web', branch: 'main' };
    expect((await directory.find(web))?.id).toBe('xK9mP2nQ');

    // The list is due and its read hangs: a poll with 400 ms left has the last list after 200 ms.
    fake.hold(list);
    clock.now = 1031;
    expect((await directory.find(web, { deadlineMs: Date.now() + 400 }))?.id).toBe('xK9mP2nQ');
    expect(fake.held()).toBe(1);

    // A refresh (a 404 on a queue id) needs a read begun after it: that one is waited for whole.
    fake.release(list);
    // Its answer serves from now (the read ends before this find, which is not due).
    await directory.find(web);
    clock.now = 1062;
    directory.invalidate();
    let refreshed = false;
    const refresh = directory.find(web, { deadlineMs: Date.now() + 400 }).then((queue) => {
      refreshed = true;
      return queue;
    });
    await untilHeld(fake, 1);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(refreshed).toBe(false);
    fake.hold(undefined);
    fake.release();
    expect((await refresh)?.id).toBe('xK9mP2nQ');
    expect(fake.requestsTo(list)).toHaveLength(3);
  });

  it('serves the last good list of queues while its reads fail, until it is older than staleAfterSeconds, reading at most once per interval', async () => {
    const fake = await startFakeV2({ queues: pageAt('merge-queues-of-an-organization.json') });
    const clock = { now: 1000 };
    const failures: string[] = [];
    const directory = new V2QueueDirectory(readerOf(fake), 30, () => clock.now, {
      staleAfterSeconds: 60,
      onFailure: (error) => failures.push(error.message),
    });
    const web = { repo: 'github.com/acme/web', branch: 'main' };
    const listReads = () => fake.requestsTo(/^\/v2\/merge-queues$/).length;
    expect((await directory.find(web))?.id).toBe('xK9mP2nQ');
    fake.fail(/^\/v2\/merge-queues$/, 500);
    // Due again: the read fails, and the list read 31 s ago serves on.
    clock.now = 1031;
    expect((await directory.find(web))?.id).toBe('xK9mP2nQ');
    expect([listReads(), failures.length]).toEqual([2, 1]);
    // Within the interval nothing is read.
    clock.now = 1050;
    expect((await directory.find(web))?.id).toBe('xK9mP2nQ');
    expect(listReads()).toBe(2);
    // The last good list is 61 s old, past staleAfterSeconds: the polls fail with the read's error.
    clock.now = 1061;
    await expect(directory.find(web)).rejects.toThrow(/HTTP 500/);
    expect([listReads(), failures.length]).toEqual([3, 2]);
    fake.recover();
    clock.now = 1091;
    expect((await directory.find(web))?.id).toBe('xK9mP2nQ');
  });
});

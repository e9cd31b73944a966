// Repository lookups (`GET /v2/repositories/{id}`) against a local server, counted call by call:
// which answers are remembered, which wait before they are asked again, and which are asked again
// at the next read. The clock is the test's: a read "at 300 s" is one whose clock says so.
import { afterEach, describe, expect, it } from 'vitest';
import {
  RepositoryNames,
  type LookupRound,
  type UnnamedRepositories,
} from '../../../src/poller/v2/v2RepositoryNames.js';
import { V2TestDirectory } from '../../../src/poller/v2/v2TestDirectory.js';
import { Secret } from '../../../src/secrets/secret.js';
import { TrunkV2Client } from '../../../src/trunk/v2Client.js';
import { fixtureAt, pageAt, startFakeV2 } from '../../support/fakeTrunkV2.js';
import { cleanUp, makeClient, sendJson, startApiServer } from '../../trunk/harness.js';

afterEach(cleanUp);

const NAMED = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const MALFORMED = 'not-a-uuid';
const FAILING = '0b1c2d3e-4f50-4617-8a9b-0c1d2e3f4a5b';
const UNREACHABLE = '9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a';
const GONE = '11111111-2222-4333-8444-555555555555';
const SUBGROUP = '22222222-3333-4444-8555-666666666666';
const RESTORED = '33333333-4444-4555-8666-777777777777';
const FLAKY = '44444444-5555-4666-8777-888888888888';

/** Lists read every 300 s (the default `flakyTestsIntervalSeconds`), four lookups at once. */
const EVERY_300_S: LookupRound = { atATime: 4, intervalSeconds: 300 };

/** What a lookup of an id is answered: a repository (200), or a status. */
type Answer = 'repository' | 404 | 503;

/**
 * A local Trunk answering each id's lookup as trunk-api-v2.md says it may; an id of `scripts` is
 * answered its answers in turn, the last one from then on.
 */
async function repositories(scripts: Readonly<Record<string, readonly Answer[]>> = {}) {
  const lookups = new Map<string, number>();
  const server = await startApiServer((req, res) => {
    const id = decodeURIComponent(req.url?.slice('/v2/repositories/'.length) ?? '');
    const script = scripts[id];
    const turn = lookups.get(id) ?? 0;
    lookups.set(id, turn + 1);
    const scripted = script?.[Math.min(turn, script.length - 1)];
    // "`id` is a uuid (a malformed id is 400)".
    if (id.startsWith(MALFORMED)) {
      sendJson(res, 400, { error: { code: 'VALIDATION_FAILED', message: 'id must be a uuid' } });
    } else if (id === FAILING || scripted === 503) {
      sendJson(res, 503, { error: { code: 'UPSTREAM_ERROR', message: 'try again' } });
    } else if (id === UNREACHABLE) {
      res.destroy();
    } else if (id.startsWith(GONE) || scripted === 404) {
      // "A repository in another organization is reported as `404`", as one deleted is.
      sendJson(res, 404, { error: { code: 'REPOSITORY_NOT_FOUND' } });
    } else if (id === SUBGROUP) {
      // `path` is "`owner/repo`" in Trunk's definition; a GitLab subgroup makes it longer.
      sendJson(res, 200, fixtureAt('repository-in-a-gitlab-subgroup.json'));
    } else {
      sendJson(res, 200, fixtureAt('repository-on-the-providers-default-host.json'));
    }
  }, '');
  // One attempt a lookup: each read's calls are then counted one for one.
  const { client } = makeClient(server.origin, {
    apiKey: new Secret('trunk_v2_k3y'),
    retry: { maxAttempts: 1, baseDelayMs: 10, maxDelayMs: 10 },
  });
  const callsFor = (id: string): number =>
    server.requests.filter((request) => request.url === `/v2/repositories/${id}`).length;
  return { reader: new TrunkV2Client(client), callsFor };
}

/** The test's clock, in Unix seconds, and the names that read it. */
function clocked(maxKept?: { named?: number; unnamed?: number }) {
  const clock = { now: 0 };
  return { clock, names: new RepositoryNames(() => clock.now, maxKept) };
}

const sorted = (ids: ReadonlySet<string>): string[] => [...ids].sort();

describe('RepositoryNames', () => {
  it('asks an id answered 400 once for good, again at each read after a 5xx or a network error, and a 404 not before the next interval', async () => {
    const { reader, callsFor } = await repositories();
    const { clock, names } = clocked();
    const ids = [NAMED, MALFORMED, FAILING, UNREACHABLE, GONE];
    const reads: UnnamedRepositories[] = [];
    // The list's read at 0 s, one 10 s later (a webhook event's, or the other list's), and the
    // next interval's at 300 s.
    for (const at of [0, 10, 300]) {
      clock.now = at;
      reads.push(await names.resolve(ids, reader, EVERY_300_S, {}));
    }

    expect(names.nameOf(NAMED)).toBe('github.com/acme/web');
    for (const { unnamed, unresolved } of reads) {
      // The 400 is counted unnamed at every read, without a call after the first; the 404 too,
      // called at 0 s and 300 s only.
      expect(sorted(unnamed)).toEqual([GONE, MALFORMED].sort());
      expect(sorted(unresolved)).toEqual([FAILING, UNREACHABLE].sort());
    }
    expect({
      named: callsFor(NAMED),
      malformed: callsFor(MALFORMED),
      failing: callsFor(FAILING),
      unreachable: callsFor(UNREACHABLE),
      gone: callsFor(GONE),
    }).toEqual({ named: 1, malformed: 1, failing: 3, unreachable: 3, gone: 2 });
  });

  it('waits after an id answered 404 or without an owner/name path for one interval, then twice as long after each such answer, an hour at most', async () => {
    const { reader, callsFor } = await repositories();
    const { clock, names } = clocked();
    // Read k at (k − 1) × 300 s, for 40 reads (3 h 15 min). Each answer is a 404 (GONE), or a
    // repository whose path is `platform/payments/ledger` (SUBGROUP). Counted by hand, each lookup
    // and the wait it starts (300 s, doubled at each answer, 3600 s at most):
    //   read 1 (0 s): 1st answer, waits 300 s    → read 2 (300 s)
    //   read 2 (300 s): 2nd, waits 600 s         → read 4 (900 s)
    //   read 4 (900 s): 3rd, waits 1200 s        → read 8 (2100 s)
    //   read 8 (2100 s): 4th, waits 2400 s       → read 16 (4500 s)
    //   read 16 (4500 s): 5th, waits 3600 s (not 4800) → read 28 (8100 s)
    //   read 28 (8100 s): 6th, waits 3600 s      → read 40 (11700 s)
    const askedAt: Record<string, number[]> = { [GONE]: [], [SUBGROUP]: [] };
    for (let read = 1; read <= 40; read += 1) {
      clock.now = (read - 1) * 300;
      const before = { gone: callsFor(GONE), subgroup: callsFor(SUBGROUP) };
      const { unnamed, unresolved } = await names.resolve(
        [GONE, SUBGROUP],
        reader,
        EVERY_300_S,
        {},
      );
      // Asked or waiting, their tests count for no repository, and no target fails for them.
      expect(sorted(unnamed)).toEqual([GONE, SUBGROUP].sort());
      expect(unresolved.size).toBe(0);
      if (callsFor(GONE) > before.gone) askedAt[GONE]?.push(read);
      if (callsFor(SUBGROUP) > before.subgroup) askedAt[SUBGROUP]?.push(read);
    }
    expect(askedAt).toEqual({
      [GONE]: [1, 2, 4, 8, 16, 28, 40],
      [SUBGROUP]: [1, 2, 4, 8, 16, 28, 40],
    });
  });

  it('names an id answered 404 twice, then found, at the first read after its wait', async () => {
    const { reader, callsFor } = await repositories({ [RESTORED]: [404, 404, 'repository'] });
    const { clock, names } = clocked();
    // 0 s: 404, waits 300 s. 300 s: 404, waits 600 s. 600 s: waiting. 900 s: found.
    const named: (string | undefined)[] = [];
    for (const at of [0, 300, 600, 900, 1200]) {
      clock.now = at;
      await names.resolve([RESTORED], reader, EVERY_300_S, {});
      named.push(names.nameOf(RESTORED));
    }
    const web = 'github.com/acme/web';
    expect(named).toEqual([undefined, undefined, undefined, web, web]);
    expect(callsFor(RESTORED)).toBe(3);
  });

  it('asks an id whose lookup answered 5xx at the next read, however soon, and counts on from its answers without a name', async () => {
    const { reader, callsFor } = await repositories({ [FLAKY]: [404, 503, 404] });
    const { clock, names } = clocked();
    // 0 s: 404 (1st), waits 300 s. 300 s: 503, which says nothing of the id: it is not named yet.
    // 310 s: asked again, 404 (2nd), waits 600 s. 700 s: waiting. 910 s: asked, 404 (3rd).
    const calls: number[] = [];
    const unresolved: number[] = [];
    for (const at of [0, 300, 310, 700, 910]) {
      clock.now = at;
      unresolved.push((await names.resolve([FLAKY], reader, EVERY_300_S, {})).unresolved.size);
      calls.push(callsFor(FLAKY));
    }
    expect(calls).toEqual([1, 2, 3, 3, 4]);
    expect(unresolved).toEqual([0, 1, 0, 0, 0]);
  });

  it('asks an id answered 404 at the next read when the Trunk settings change', async () => {
    // A 404 is also what another organization's repository is answered: the old settings' answers
    // may not hold for the new ones.
    const { reader, callsFor } = await repositories();
    const { clock, names } = clocked();
    await names.resolve([GONE], reader, EVERY_300_S, {});
    clock.now = 300;
    await names.resolve([GONE], reader, EVERY_300_S, {}); // waits 600 s from here
    clock.now = 310;
    names.forgetUnnamed();
    await names.resolve([GONE], reader, EVERY_300_S, {});
    expect(callsFor(GONE)).toBe(3);
  });

  it('keeps at most the waits it may, forgetting the id answered longest ago, which the next read asks', async () => {
    // An upstream listing new deleted repositories at every read would otherwise grow the waits
    // without end.
    const { reader, callsFor } = await repositories();
    const { clock, names } = clocked({ unnamed: 2 });
    const [first, second, third] = [`${GONE}-1`, `${GONE}-2`, `${GONE}-3`] as const;
    // One at a time: answered first, second, third; the third's wait forgets the first's.
    await names.resolve([first, second, third], reader, { ...EVERY_300_S, atATime: 1 }, {});
    clock.now = 10;
    await names.resolve([first, second, third], reader, { ...EVERY_300_S, atATime: 1 }, {});
    expect({ first: callsFor(first), second: callsFor(second), third: callsFor(third) }).toEqual({
      first: 2,
      second: 1,
      third: 1,
    });
  });

  it('asks at each read an id answered 404 that is too long to remember, and no other', async () => {
    // Past 100 characters (a uuid has 36) an id does not wait: an upstream naming ids of megabytes
    // would otherwise hold them.
    const { reader, callsFor } = await repositories();
    const { clock, names } = clocked();
    const long = `${GONE}-${'x'.repeat(100)}`;
    for (const at of [0, 10]) {
      clock.now = at;
      await names.resolve([long, GONE], reader, EVERY_300_S, {});
    }
    expect({ long: callsFor(long), short: callsFor(GONE) }).toEqual({ long: 2, short: 1 });
  });

  it('asks again at each read an id answered 400 that is too long to remember, and no other', async () => {
    // Past 100 characters (a uuid has 36) an id is not kept: an upstream naming ids of megabytes
    // would otherwise hold them for the life of the process.
    const { reader, callsFor } = await repositories();
    const { names } = clocked();
    const long = `${MALFORMED}-${'x'.repeat(100)}`;
    for (let read = 0; read < 2; read += 1) {
      await names.resolve([long, MALFORMED], reader, { atATime: 2, intervalSeconds: 300 }, {});
    }
    expect({ long: callsFor(long), short: callsFor(MALFORMED) }).toEqual({ long: 2, short: 1 });
  });

  it('keeps every other name when it names an id too long to keep', async () => {
    // An id past 100 characters (a uuid has 36) is not kept: neither is it a reason to forget the
    // names kept.
    const { reader, callsFor } = await repositories();
    const { names } = clocked();
    const long = `${NAMED}-${'x'.repeat(100)}`;
    const round = { atATime: 1, intervalSeconds: 300 };
    await names.resolve([NAMED], reader, round, {});
    await names.resolve([long], reader, round, {});
    await names.resolve([NAMED, long], reader, round, {});
    expect(names.nameOf(NAMED)).toBe('github.com/acme/web');
    expect({ named: callsFor(NAMED), long: callsFor(long) }).toEqual({ named: 1, long: 2 });
  });

  it('keeps at most the names it may, forgetting the first named, which the next read lists asks again', async () => {
    // An upstream naming new repositories at every read would otherwise grow the names without end.
    const { reader, callsFor } = await repositories();
    const { names } = clocked({ named: 2 });
    const [first, second, third] = [
      'aaaaaaaa-0000-4000-8000-000000000001',
      'aaaaaaaa-0000-4000-8000-000000000002',
      'aaaaaaaa-0000-4000-8000-000000000003',
    ] as const;
    const oneAtATime = { atATime: 1, intervalSeconds: 300 };
    await names.resolve([first, second, third], reader, oneAtATime, {});
    await names.resolve([second, third], reader, oneAtATime, {});
    expect(names.nameOf(first)).toBeUndefined();
    await names.resolve([first], reader, oneAtATime, {});

    expect(names.nameOf(first)).toBe('github.com/acme/web');
    expect({ first: callsFor(first), second: callsFor(second), third: callsFor(third) }).toEqual({
      first: 2,
      second: 1,
      third: 1,
    });
  });
});

describe('V2TestDirectory', () => {
  it('looks up a repository id answered 404 after the test lists’ interval, on its clock, and at once after new Trunk settings', async () => {
    // The quarantined tests of three repositories and of uploads without one (the nil UUID, never
    // asked); Trunk names acme/web alone, and answers 404 for platform/api's id.
    const API_ID = '0b7a8f1e-3c2d-4e5f-9a8b-7c6d5e4f3a2b';
    const fake = await startFakeV2({
      tests: pageAt('tests-of-repositories-named-three-ways.json').data,
      repositories: { [NAMED]: fixtureAt('repository-on-the-providers-default-host.json') },
    });
    const { client } = makeClient(fake.origin, {
      token: undefined,
      apiKey: new Secret('trunk_v2_names-test'),
      retry: { maxAttempts: 1 },
    });
    const clock = { now: 1000 };
    const directory = new V2TestDirectory(
      { lister: new TrunkV2Client(client), maxAgeSeconds: 300, lookupsAtATime: 4 },
      () => clock.now,
    );
    const apiLookups = () => fake.requestsTo(new RegExp(`^/v2/repositories/${API_ID}$`)).length;
    const calls: number[] = [];
    const readAt = async (at: number) => {
      clock.now = at;
      await directory.quarantinedTestsOf('github.com/acme/web');
      calls.push(apiLookups());
    };
    await readAt(1000); // 404 (1st): waits 300 s, to 1300
    directory.expire(); // an event says the lists changed:
    await readAt(1010); // read again, the id waiting
    await readAt(1310); // the next interval's read: 404 (2nd), waits 600 s, to 1910
    directory.clientChanged(); // new Trunk settings:
    await readAt(1320); // read again, the id asked at once
    expect(calls).toEqual([1, 1, 2, 3]);
  });
});

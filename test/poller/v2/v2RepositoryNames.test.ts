// Repository lookups (`GET /v2/repositories/{id}`) against a local server, counted call by call:
// which answers are remembered and which are asked again at the next read.
import { afterEach, describe, expect, it } from 'vitest';
import { RepositoryNames } from '../../../src/poller/v2/v2RepositoryNames.js';
import { Secret } from '../../../src/secrets/secret.js';
import { TrunkV2Client } from '../../../src/trunk/v2Client.js';
import { fixtureAt } from '../../support/fakeTrunkV2.js';
import { cleanUp, makeClient, sendJson, startApiServer } from '../../trunk/harness.js';

afterEach(cleanUp);

const NAMED = '7c9e6679-7425-40de-944b-e07fc1f90ae7';
const MALFORMED = 'not-a-uuid';
const FAILING = '0b1c2d3e-4f50-4617-8a9b-0c1d2e3f4a5b';
const UNREACHABLE = '9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a';
const GONE = '11111111-2222-4333-8444-555555555555';

/** A local Trunk answering each id's lookup as trunk-api-v2.md says it may. */
async function repositories() {
  const server = await startApiServer((req, res) => {
    const id = decodeURIComponent(req.url?.slice('/v2/repositories/'.length) ?? '');
    // "`id` is a uuid (a malformed id is 400)".
    if (id.startsWith(MALFORMED)) {
      sendJson(res, 400, { error: { code: 'VALIDATION_FAILED', message: 'id must be a uuid' } });
    } else if (id === FAILING) {
      sendJson(res, 503, { error: { code: 'UPSTREAM_ERROR', message: 'try again' } });
    } else if (id === UNREACHABLE) {
      res.destroy();
    } else if (id === GONE) {
      sendJson(res, 404, { error: { code: 'REPOSITORY_NOT_FOUND' } });
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

describe('RepositoryNames', () => {
  it('asks an id answered 400 once for good, and asks again at each read after a 5xx, a network error or a 404', async () => {
    const { reader, callsFor } = await repositories();
    const names = new RepositoryNames();
    const ids = [NAMED, MALFORMED, FAILING, UNREACHABLE, GONE];
    const reads = [];
    for (let read = 0; read < 3; read += 1) reads.push(await names.resolve(ids, reader, 4, {}));

    expect(names.nameOf(NAMED)).toBe('github.com/acme/web');
    for (const { unnamed, unresolved } of reads) {
      // The 400 is counted unnamed at every read, without a call after the first.
      expect([...unnamed].sort()).toEqual([GONE, MALFORMED].sort());
      expect([...unresolved].sort()).toEqual([FAILING, UNREACHABLE].sort());
    }
    expect({
      named: callsFor(NAMED),
      malformed: callsFor(MALFORMED),
      failing: callsFor(FAILING),
      unreachable: callsFor(UNREACHABLE),
      gone: callsFor(GONE),
    }).toEqual({ named: 1, malformed: 1, failing: 3, unreachable: 3, gone: 3 });
  });

  it('asks again at each read an id answered 400 that is too long to remember, and no other', async () => {
    // Past 100 characters (a uuid has 36) an id is not kept: an upstream naming ids of megabytes
    // would otherwise hold them for the life of the process.
    const { reader, callsFor } = await repositories();
    const names = new RepositoryNames();
    const long = `${MALFORMED}-${'x'.repeat(100)}`;
    for (let read = 0; read < 2; read += 1) {
      await names.resolve([long, MALFORMED], reader, 2, {});
    }
    expect({ long: callsFor(long), short: callsFor(MALFORMED) }).toEqual({ long: 2, short: 1 });
  });

  it('keeps at most the names it may, forgetting the first named, which the next read lists asks again', async () => {
    // An upstream naming new repositories at every read would otherwise grow the names without end.
    const { reader, callsFor } = await repositories();
    const names = new RepositoryNames(2);
    const [first, second, third] = [
      'aaaaaaaa-0000-4000-8000-000000000001',
      'aaaaaaaa-0000-4000-8000-000000000002',
      'aaaaaaaa-0000-4000-8000-000000000003',
    ] as const;
    await names.resolve([first, second, third], reader, 1, {});
    await names.resolve([second, third], reader, 1, {});
    expect(names.nameOf(first)).toBeUndefined();
    await names.resolve([first], reader, 1, {});

    expect(names.nameOf(first)).toBe('github.com/acme/web');
    expect({ first: callsFor(first), second: callsFor(second), third: callsFor(third) }).toEqual({
      first: 2,
      second: 1,
      third: 1,
    });
  });
});

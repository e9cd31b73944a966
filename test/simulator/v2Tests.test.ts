// GET /v2/tests, /v2/test-collections, /v2/repositories/{id} and /v2/repositories?providerUrl=:
// the quarantined tests v1's list-quarantined-tests shows, grouped by a repository id that
// resolves, beside the tests that are not quarantined (healthy, flaky or broken), and the
// repositories behind the ids and the URLs.
import { describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/server.js';
import { PAGE_SHAPES } from './documentedShapes.js';
import { post } from './harness.js';
import { errorOf, getOne, getPage, startV2Simulator, v2Request, walk } from './v2Harness.js';

const QUARANTINED = '/v2/tests?quarantineState=quarantined&limit=100';

/** Every quarantined test of `repo` as v1 lists it, by test case id. */
async function v1Tests(
  simulator: RunningSimulator,
  repo: { host: string; owner: string; name: string },
) {
  const reply = await post(simulator, '/flaky-tests/list-quarantined-tests', {
    repo,
    org_url_slug: 'acme',
    page_query: { page_size: 100 },
  });
  const tests = new Map<string, Record<string, unknown>>();
  let page = PAGE_SHAPES.live.parse(reply.json);
  for (;;) {
    for (const test of page.quarantined_tests) tests.set(test.test_case_id, test);
    if (page.page.next_page_token === '') return tests;
    const next = await post(simulator, '/flaky-tests/list-quarantined-tests', {
      repo,
      org_url_slug: 'acme',
      page_query: { page_size: 100, page_token: page.page.next_page_token },
    });
    page = PAGE_SHAPES.live.parse(next.json);
  }
}

describe('GET /v2/tests', () => {
  it('lists the tests v1 lists as quarantined, grouped by a repository id that resolves', async () => {
    const simulator = await startV2Simulator({ seed: 14, flavour: 'live' });
    const { rows } = await walk(simulator, QUARANTINED);
    const byRepo = new Map<string, Record<string, unknown>[]>();
    for (const row of rows) {
      const repoId = String(row.repoId);
      byRepo.set(repoId, [...(byRepo.get(repoId) ?? []), row]);
    }
    expect(byRepo.size).toBe(4);
    let unclassified = 0;
    for (const [repoId, tests] of byRepo) {
      const repository = await getOne(simulator, `/v2/repositories/${repoId}`);
      const [owner = '', name = ''] = String(repository.path).split('/');
      const selfHosted = name === 'storefront';
      const host = selfHosted ? 'gitlab.acme.dev' : 'github.com';
      expect(repository).toMatchObject({
        id: repoId,
        provider: selfHosted ? 'gitlab' : 'github',
        path: `${owner}/${name}`,
        // Null on the provider's own host: set only for a self-hosted one.
        host: selfHosted ? 'gitlab.acme.dev' : null,
        url: `https://${host}/${owner}/${name}`,
      });
      expect(repository.defaultBranch ?? (name === 'mobile' ? 'develop' : 'main')).toBe(
        name === 'mobile' ? 'develop' : 'main',
      );
      const v1 = await v1Tests(simulator, { host, owner, name });
      expect(tests.map((test) => test.id).sort()).toEqual([...v1.keys()].sort());
      for (const test of tests) {
        const old = v1.get(String(test.id));
        expect(test).toMatchObject({
          name: old?.name,
          // v1's live shape says null where v2 says "" (the definition types them as strings).
          parentName: old?.parent ?? '',
          className: old?.classname ?? '',
          file: old?.file ?? '',
          variant: old?.variant,
          codeowners: old?.codeowners,
          status: String(old?.status).toLowerCase(),
          quarantineState: 'quarantined',
          quarantinedSince: old?.quarantined_at,
        });
        // A test quarantined by hand that no monitor ever classified has no statusSince.
        if (test.statusSince === null) {
          unclassified += 1;
          expect(old).toMatchObject({ status: 'HEALTHY', quarantine_setting: 'ALWAYS_QUARANTINE' });
        } else expect(test.statusSince).toBe(old?.status_last_updated_at);
      }
    }
    expect(unclassified).toBeGreaterThan(0);
  });

  it('filters by status, owner, quarantine state and test collection', async () => {
    const simulator = await startV2Simulator({ seed: 15 });
    const { rows: all } = await walk(simulator, '/v2/tests?limit=100');
    const quarantined = await walk(simulator, QUARANTINED);
    const notQuarantined = await walk(simulator, '/v2/tests?quarantineState=notQuarantined');
    expect(quarantined.rows.length + notQuarantined.rows.length).toBe(all.length);
    expect(notQuarantined.rows.length).toBeGreaterThan(0);
    const ids = (list: Record<string, unknown>[]) => list.map((row) => row.id);
    expect(ids(quarantined.rows)).toEqual(
      ids(all.filter((row) => row.quarantineState === 'quarantined')),
    );
    const broken = await walk(simulator, `${QUARANTINED}&status=broken,healthy`);
    expect(ids(broken.rows)).toEqual(ids(quarantined.rows.filter((row) => row.status !== 'flaky')));
    const owner = '@acme/platform';
    const owned = await walk(simulator, `/v2/tests?owner=${encodeURIComponent(owner)}`);
    expect(owned.rows.length).toBeGreaterThan(0);
    expect(ids(owned.rows)).toEqual(
      ids(all.filter((row) => (row.codeowners as string[]).includes(owner))),
    );
    const collections = await getPage(simulator, '/v2/test-collections');
    expect(collections.data.map((row) => row.name)).toEqual([
      'acme/web',
      'acme/api',
      'acme/mobile',
      'acme/storefront',
    ]);
    for (const collection of collections.data) {
      const { rows: ofCollection } = await walk(
        simulator,
        `/v2/tests?testCollectionId=${String(collection.id)}`,
      );
      expect(ids(ofCollection)).toEqual(
        ids(all.filter((row) => row.testCollectionId === collection.id)),
      );
      expect(collection.testCaseCount).toBe(ofCollection.length);
    }

    const bad = await v2Request(simulator, '/v2/tests?status=FLAKY');
    expect(errorOf(bad)?.code).toBe('VALIDATION_FAILED');
    const state = await v2Request(simulator, '/v2/tests?quarantineState=QUARANTINED');
    expect(errorOf(state)?.message).toContain('quarantineState');
  });
});

describe('GET /v2/repositories/{id}', () => {
  it('answers 404 REPOSITORY_NOT_FOUND for an unknown uuid, and 400 for an id that is none', async () => {
    const simulator = await startV2Simulator();
    const unknown = await v2Request(
      simulator,
      '/v2/repositories/00000000-0000-4000-8000-000000000000',
    );
    expect(unknown.status).toBe(404);
    expect(errorOf(unknown)?.code).toBe('REPOSITORY_NOT_FOUND');
    const malformed = await v2Request(simulator, '/v2/repositories/repo_nope');
    expect(malformed.status).toBe(400);
    expect(errorOf(malformed)?.code).toBe('VALIDATION_FAILED');
  });
});

describe('GET /v2/repositories?providerUrl=', () => {
  it('resolves a provider URL however it ends, and answers 404 PROVIDER_URL_NOT_FOUND for one it does not know', async () => {
    const simulator = await startV2Simulator();
    const resolve = (url: string) =>
      v2Request(simulator, `/v2/repositories?providerUrl=${encodeURIComponent(url)}`);
    // "A `.git` suffix and trailing slashes are normalized away, so every spelling of the same
    // repository resolves alike."
    for (const url of [
      'https://github.com/acme/web',
      'https://github.com/acme/web.git',
      'https://github.com/acme/web/',
    ]) {
      const reply = await resolve(url);
      expect(reply.status, url).toBe(200);
      expect((reply.json as { data: Record<string, unknown>[] }).data).toEqual([
        expect.objectContaining({
          path: 'acme/web',
          host: null,
          url: 'https://github.com/acme/web',
        }),
      ]);
    }
    // "An unparseable `providerUrl` and a genuine empty result both answer `PROVIDER_URL_NOT_FOUND`".
    for (const url of ['https://github.com/acme/wbe', 'not a url']) {
      const reply = await resolve(url);
      expect(reply.status, url).toBe(404);
      expect(errorOf(reply)?.code).toBe('PROVIDER_URL_NOT_FOUND');
    }
    const missing = await v2Request(simulator, '/v2/repositories');
    expect(missing.status).toBe(400);
    expect(errorOf(missing)?.code).toBe('VALIDATION_FAILED');
  });
});

// GET /v2/tests, /v2/test-collections and /v2/repositories/{id}: the quarantined tests v1's
// list-quarantined-tests shows, grouped by repository id, and the repositories behind the ids.
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
    expect(byRepo.size).toBe(3);
    for (const [repoId, tests] of byRepo) {
      const repository = await getOne(simulator, `/v2/repositories/${repoId}`);
      const [owner = '', name = ''] = String(repository.path).split('/');
      expect(repository).toEqual({
        id: repoId,
        provider: 'github',
        path: `${owner}/${name}`,
        host: 'github.com',
        url: `https://github.com/${owner}/${name}`,
        defaultBranch: name === 'mobile' ? 'develop' : 'main',
      });
      const v1 = await v1Tests(simulator, { host: 'github.com', owner, name });
      expect(tests.map((test) => test.id).sort()).toEqual([...v1.keys()].sort());
      for (const test of tests) {
        const old = v1.get(String(test.id));
        expect(test).toMatchObject({
          name: old?.name,
          parentName: old?.parent,
          className: old?.classname,
          file: old?.file,
          variant: old?.variant,
          codeowners: old?.codeowners,
          status: String(old?.status).toLowerCase(),
          quarantineState: 'quarantined',
          quarantinedSince: old?.quarantined_at,
          statusSince: old?.status_last_updated_at,
        });
      }
    }
  });

  it('filters by status, owner and test collection; no unquarantined tests exist', async () => {
    const simulator = await startV2Simulator({ seed: 15 });
    const { rows: all } = await walk(simulator, QUARANTINED);
    const broken = await walk(simulator, `${QUARANTINED}&status=broken,healthy`);
    expect(broken.rows.map((row) => row.id)).toEqual(
      all.filter((row) => row.status !== 'flaky').map((row) => row.id),
    );
    const owner = '@acme/platform';
    const owned = await walk(simulator, `${QUARANTINED}&owner=${encodeURIComponent(owner)}`);
    expect(owned.rows.length).toBeGreaterThan(0);
    expect(owned.rows.map((row) => row.id)).toEqual(
      all.filter((row) => (row.codeowners as string[]).includes(owner)).map((row) => row.id),
    );
    const collections = await getPage(simulator, '/v2/test-collections');
    expect(collections.data.map((row) => row.name)).toEqual([
      'acme/web',
      'acme/api',
      'acme/mobile',
    ]);
    const api = collections.data[1];
    const ofApi = await walk(simulator, `${QUARANTINED}&testCollectionId=${String(api?.id)}`);
    expect(ofApi.rows.map((row) => row.id)).toEqual(
      all.filter((row) => row.repoId === api?.repoId).map((row) => row.id),
    );
    expect((await getPage(simulator, '/v2/tests?quarantineState=notQuarantined')).data).toEqual([]);

    const bad = await v2Request(simulator, '/v2/tests?status=FLAKY');
    expect(errorOf(bad)?.code).toBe('VALIDATION_FAILED');
    const state = await v2Request(simulator, '/v2/tests?quarantineState=QUARANTINED');
    expect(errorOf(state)?.message).toContain('quarantineState');
  });

  it('answers 404 REPOSITORY_NOT_FOUND for an unknown repository id', async () => {
    const simulator = await startV2Simulator();
    const reply = await v2Request(simulator, '/v2/repositories/repo_nope');
    expect(reply.status).toBe(404);
    expect(errorOf(reply)?.code).toBe('REPOSITORY_NOT_FOUND');
  });
});

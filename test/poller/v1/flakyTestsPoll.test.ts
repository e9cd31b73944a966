// pollFlakyTests over real sockets with the real TrunkClient: page walks on a node:http fake with
// opaque tokens, a walk of the simulator checked against the world's own list, and the ways a list
// can misbehave (cyclic tokens, empty pages, nulls where strings were documented).
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { PaginationError, pollFlakyTests } from '../../../src/poller/v1/flakyTestsPoll.js';
import { NO_CODEOWNER, type QuarantinedTests } from '../../../src/snapshot/types.js';
import {
  SIMULATOR_ORG_SLUG,
  type SimulatedRepository,
} from '../../../src/simulator/repositories.js';
import type { SimulatorFlavour } from '../../../src/simulator/responses.js';
import { startTestSimulator } from '../../support/simulator.js';
import type { RepoRef } from '../../../src/trunk/schemas.js';
import {
  REPO,
  TOKEN,
  cleanUp,
  makeClient,
  rejectionOf,
  sendJson,
  sendText,
  startApiServer,
} from '../../trunk/harness.js';
import type { ApiServer } from '../../trunk/harness.js';

afterEach(cleanUp);

const LIST_PATH = '/v1/flaky-tests/list-quarantined-tests';
const TAKEN_AT = 1_767_261_600;

/** A list item as a fake puts it on the wire (fields may be null or missing on purpose). */
type WireTest = Record<string, unknown>;

interface ListRequest {
  readonly org_url_slug: string;
  readonly page_query: { readonly page_size: number; readonly page_token: string };
}

function listRequests(server: ApiServer): ListRequest[] {
  return server.requests
    .filter((request) => request.url === LIST_PATH)
    .map((request) => JSON.parse(request.body) as ListRequest);
}

function pageInfo(totalRows: number, next: string, pageIndex = 0) {
  return {
    total_rows: totalRows,
    total_pages: Math.ceil(totalRows / 100),
    next_page_token: next,
    prev_page_token: '',
    last_page_token: '',
    page_index: pageIndex,
  };
}

/**
 * A quarantine list served in pages of the requested page_size, behind random opaque tokens (a
 * client that computes tokens itself, or reuses a stale one, gets a 400).
 */
async function startListFake(
  tests: Pick<readonly WireTest[], 'length' | 'slice'>,
  sendsEmptyValues = true,
): Promise<ApiServer> {
  const offsets = new Map<string, number>([['', 0]]);
  return startApiServer((_req, res, _index, recorded) => {
    if (recorded.url !== LIST_PATH) {
      sendText(res, 404, `no such endpoint: ${recorded.url}`);
      return;
    }
    const { page_query: query } = JSON.parse(recorded.body) as ListRequest;
    const offset = offsets.get(query.page_token);
    if (offset === undefined) {
      sendText(res, 400, 'page_query.page_token is not a valid page token');
      return;
    }
    const end = offset + query.page_size;
    let next = '';
    if (end < tests.length) {
      next = randomBytes(12).toString('base64url');
      offsets.set(next, end);
    }
    const page = {
      ...pageInfo(tests.length, next, Math.floor(offset / query.page_size)),
      total_pages: Math.ceil(tests.length / query.page_size),
    };
    sendJson(res, 200, {
      quarantined_tests: tests.slice(offset, end),
      // As an encoder that leaves out empty values, and a service that does not count its rows.
      page: sendsEmptyValues ? page : { next_page_token: next === '' ? undefined : next },
    });
  });
}

/** The quarantined tests one poll of `repo` reads. */
async function poll(apiUrl: string, repo: RepoRef = REPO): Promise<QuarantinedTests> {
  const { client } = makeClient(apiUrl);
  const snapshot = await pollFlakyTests({
    reader: client,
    repo,
    repoName: `${repo.host}/${repo.owner}/${repo.name}`,
    orgUrlSlug: SIMULATOR_ORG_SLUG,
    options: {},
    now: () => TAKEN_AT,
  });
  expect(snapshot).toMatchObject({
    kind: 'flaky_tests',
    repo: `${repo.host}/${repo.owner}/${repo.name}`,
    takenAt: TAKEN_AT,
  });
  if (snapshot.quarantine === undefined) throw new Error('a v1 poll always reads the quarantine');
  return snapshot.quarantine;
}

const HOUR = 3600;
const DAY = 24 * HOUR;
const BASE = Date.parse('2025-06-01T00:00:00Z') / 1000;

/** Owner sets cycling over five shapes: none, one team, two teams, one person, the other team. */
const OWNER_SHAPES: readonly (readonly string[])[] = [
  [],
  ['@acme/web'],
  ['@acme/web', '@acme/api'],
  ['@alice'],
  ['@acme/api'],
];

function generatedTest(index: number, quarantinedAt: number): WireTest {
  return {
    name: `test_case_${index}`,
    parent: `suite_${Math.floor(index / 10)}`,
    file: `src/module_${index % 7}.test.ts`,
    classname: `Module${index % 7}`,
    codeowners: [...(OWNER_SHAPES[index % OWNER_SHAPES.length] ?? [])],
    quarantined_at: new Date(quarantinedAt * 1000).toISOString(),
    status_last_updated_at: new Date((quarantinedAt + HOUR) * 1000).toISOString(),
    test_case_id: `tc-${index.toString().padStart(4, '0')}`,
    variant: '',
  };
}

describe('pollFlakyTests paging', () => {
  it('walks every page at page size 100 and counts each test once', async () => {
    // The oldest quarantine sits on the fourth page, far from either end of the list.
    const OLDEST_INDEX = 317;
    const oldest = BASE - 90 * 24 * HOUR;
    const tests = Array.from({ length: 430 }, (_unused, index) =>
      generatedTest(index, index === OLDEST_INDEX ? oldest : BASE + index * HOUR),
    );
    const server = await startListFake(tests);

    const snapshot = await poll(server.apiUrl);

    const requests = listRequests(server);
    expect(requests).toHaveLength(5);
    expect(requests.map((request) => request.page_query.page_size)).toEqual([
      100, 100, 100, 100, 100,
    ]);
    expect(requests.map((request) => request.org_url_slug)).toEqual(Array(5).fill('acme'));
    // First page by the empty token, then only tokens the fake handed out, each once.
    const tokens = requests.map((request) => request.page_query.page_token);
    expect(tokens[0]).toBe('');
    expect(new Set(tokens).size).toBe(5);

    // 430 tests, 86 of each owner shape; a two-owner test counts for both owners.
    expect(snapshot.byCodeowner).toEqual(
      new Map([
        [NO_CODEOWNER, 86],
        ['@acme/web', 172],
        ['@acme/api', 172],
        ['@alice', 86],
      ]),
    );
    expect(snapshot).toMatchObject({ count: 430, oldestQuarantinedAt: oldest });
  });

  it('counts a row repeated across two pages once (offset paging over a changing list)', async () => {
    const tests = Array.from({ length: 150 }, (_unused, index) =>
      generatedTest(index, BASE + index * HOUR),
    );
    const server = await startApiServer((_req, res, index) => {
      // Page two starts one row early, as if a test left the list between the two requests.
      const rows = index === 0 ? tests.slice(0, 100) : tests.slice(99, 150);
      sendJson(res, 200, {
        quarantined_tests: rows,
        page: pageInfo(150, index === 0 ? 'opaque-page-2' : '', index),
      });
    });

    const snapshot = await poll(server.apiUrl);

    expect(listRequests(server)).toHaveLength(2);
    expect([...snapshot.byCodeowner.values()].reduce((sum, count) => sum + count, 0)).toBe(
      // 150 tests; 30 of them (shape 2) have two owners.
      150 + 30,
    );
    expect(snapshot.byCodeowner.get(NO_CODEOWNER)).toBe(30);
  });

  it('ends a walk whose next_page_token cycles with a PaginationError after a bounded number of requests', async () => {
    const nextOf: Readonly<Record<string, string>> = {
      '': 'tok-A',
      'tok-A': 'tok-B',
      'tok-B': 'tok-A',
    };
    const server = await startApiServer((_req, res, index, recorded) => {
      const { page_query: query } = JSON.parse(recorded.body) as ListRequest;
      sendJson(res, 200, {
        quarantined_tests: [generatedTest(index, BASE)],
        page: pageInfo(3, nextOf[query.page_token] ?? '', index),
      });
    });

    const error = await rejectionOf(poll(server.apiUrl));

    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toContain('github.com/acme/web');
    // '', tok-A, tok-B, and tok-A again is never requested.
    expect(listRequests(server).map((request) => request.page_query.page_token)).toEqual([
      '',
      'tok-A',
      'tok-B',
    ]);
  });

  it('ends a walk whose next_page_token points at the page itself after two requests', async () => {
    const server = await startApiServer((_req, res, index) => {
      sendJson(res, 200, {
        quarantined_tests: [generatedTest(index, BASE)],
        page: pageInfo(2, 'same-token-forever', index),
      });
    });

    const error = await rejectionOf(poll(server.apiUrl));

    expect(error).toBeInstanceOf(PaginationError);
    expect(listRequests(server)).toHaveLength(2);
  });

  it('stops a walk whose next_page_token is longer than 8,192 characters rather than send it back', async () => {
    const server = await startApiServer((_req, res, index) => {
      sendJson(res, 200, {
        quarantined_tests: [generatedTest(index, BASE)],
        page: pageInfo(3, index === 0 ? 'x'.repeat(8193) : '', index),
      });
    });

    const error = await rejectionOf(poll(server.apiUrl));

    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toContain(
      'gives a next_page_token of 8193 characters on page 1, longer than 8192; stopped',
    );
    expect(listRequests(server)).toHaveLength(1);
  });

  it('ends cleanly on an empty page with next_page_token ""', async () => {
    const server = await startApiServer((_req, res) => {
      sendJson(res, 200, { quarantined_tests: [], page: { ...pageInfo(0, ''), total_pages: 0 } });
    });

    const snapshot = await poll(server.apiUrl);

    expect(listRequests(server)).toHaveLength(1);
    expect(snapshot.count).toBe(0);
    expect(snapshot.byCodeowner.size).toBe(0);
    expect(snapshot.oldestQuarantinedAt).toBeUndefined();
  });

  it('tolerates null parent/file/classname and a missing quarantined_at', async () => {
    const withNulls: WireTest[] = [
      {
        name: 'renders the header',
        parent: null,
        file: null,
        classname: null,
        codeowners: ['@acme/web'],
        status_last_updated_at: '2026-01-01T00:00:00Z',
        test_case_id: 'tc-null-1',
        variant: '',
        status: 'FLAKY',
        quarantine_setting: 'AUTO_QUARANTINE',
      },
      {
        name: 'retries the upload',
        parent: null,
        file: null,
        classname: null,
        codeowners: [],
        quarantined_at: '2025-11-20T08:30:00Z',
        status_last_updated_at: '2026-01-01T00:00:00Z',
        test_case_id: 'tc-null-2',
        variant: 'linux',
        status: 'BROKEN',
        quarantine_setting: 'ALWAYS_QUARANTINE',
      },
    ];
    const server = await startListFake(withNulls);

    const snapshot = await poll(server.apiUrl);

    expect(snapshot.count).toBe(2);
    expect(snapshot.byCodeowner).toEqual(
      new Map([
        ['@acme/web', 1],
        [NO_CODEOWNER, 1],
      ]),
    );
    // Only the test that has a quarantine timestamp can be the oldest.
    expect(snapshot.oldestQuarantinedAt).toBe(Date.parse('2025-11-20T08:30:00Z') / 1000);
  });

  it('counts an empty owner name as no owner, and keeps an owner named none apart from it', async () => {
    const server = await startListFake([
      { name: 'a', codeowners: [''], test_case_id: 'tc-a' },
      { name: 'b', codeowners: [], test_case_id: 'tc-b' },
      { name: 'c', codeowners: ['none', ''], test_case_id: 'tc-c' },
    ]);

    const snapshot = await poll(server.apiUrl);

    expect(snapshot.byCodeowner).toEqual(
      new Map([
        [NO_CODEOWNER, 2],
        ['none', 1],
      ]),
    );
  });

  it('reports no oldest quarantine when no test carries quarantined_at', async () => {
    const server = await startListFake([
      { name: 'a', codeowners: ['@bob'], test_case_id: 'tc-a', parent: null },
      { name: 'b', codeowners: ['@bob'], test_case_id: 'tc-b', file: null },
    ]);

    const snapshot = await poll(server.apiUrl);

    expect(snapshot.byCodeowner).toEqual(new Map([['@bob', 2]]));
    expect(snapshot.oldestQuarantinedAt).toBeUndefined();
  });
});

describe('pollFlakyTests quarantine windows and ages', () => {
  it('counts every test walked, over all pages, with each boundary on its inclusive side', async () => {
    // Ages at and just past each boundary, spread over three pages by 100 filler tests each.
    const ages = [
      0,
      DAY,
      DAY + 1,
      7 * DAY,
      7 * DAY + 1,
      30 * DAY,
      30 * DAY + 1,
      90 * DAY,
      90 * DAY + 1,
      400 * DAY,
      -HOUR, // quarantined_at ahead of the exporter's clock: just quarantined
    ];
    const filler = Array.from({ length: 200 }, (_unused, index) =>
      generatedTest(1000 + index, TAKEN_AT - 3 * DAY),
    );
    const probes = ages.map((age, index) => generatedTest(index, TAKEN_AT - age));
    const tests = [filler.slice(0, 100), probes.slice(0, 5), filler.slice(100), probes.slice(5)]
      .flat()
      .concat([{ name: 'untimed', codeowners: [], test_case_id: 'tc-untimed' }]);
    const server = await startListFake(tests);

    const snapshot = await poll(server.apiUrl);

    expect(listRequests(server)).toHaveLength(3);
    // 1d: ages 0, DAY and the future one. 7d: those, DAY + 1, 7 * DAY and the 200 fillers.
    expect(snapshot.quarantinedRecently).toEqual(
      new Map([
        ['1d', 3],
        ['7d', 205],
      ]),
    );
    expect(snapshot.quarantinedOlderThan).toEqual(
      new Map([
        ['7d', 6],
        ['30d', 4],
        ['90d', 2],
      ]),
    );
  });
});

describe('pollFlakyTests against the simulator', () => {
  it.each<SimulatorFlavour>(['documented', 'live'])(
    '%s flavour: equals a manual walk of the world’s list',
    async (flavour) => {
      const { world, simulator } = await startTestSimulator({ seed: 7, flavour, token: TOKEN });
      const walked = { multiPage: 0, unowned: 0, multiOwner: 0 };

      for (const repository of world.repositories) {
        const repo = refOf(repository);
        simulator.resetRequestCounts();

        const snapshot = await poll(simulator.baseUrl, repo);

        // The same walk, straight from the world.
        const byCodeowner = new Map<string, number>();
        let oldest: number | undefined;
        const ages: number[] = [];
        let totalRows = -1;
        let rows = 0;
        let pages = 0;
        let token = '';
        do {
          const answer = world.listQuarantinedTests(repo, 100, token);
          if (!answer.ok) throw new Error(answer.message);
          pages += 1;
          if (totalRows < 0) totalRows = answer.body.page.total_rows;
          for (const test of answer.body.quarantined_tests) {
            rows += 1;
            if (test.codeowners.length === 0) walked.unowned += 1;
            if (test.codeowners.length > 1) walked.multiOwner += 1;
            const owners = test.codeowners.length === 0 ? [NO_CODEOWNER] : test.codeowners;
            for (const owner of owners) byCodeowner.set(owner, (byCodeowner.get(owner) ?? 0) + 1);
            const at = Date.parse(test.quarantined_at) / 1000;
            if (oldest === undefined || at < oldest) oldest = at;
            ages.push(TAKEN_AT - at);
          }
          token = answer.body.page.next_page_token;
        } while (token !== '');

        expect(rows).toBe(totalRows);
        expect(snapshot).toEqual({
          count: totalRows,
          byCodeowner,
          oldestQuarantinedAt: oldest,
          quarantinedRecently: new Map([
            ['1d', ages.filter((age) => age <= DAY).length],
            ['7d', ages.filter((age) => age <= 7 * DAY).length],
          ]),
          quarantinedOlderThan: new Map([
            ['7d', ages.filter((age) => age > 7 * DAY).length],
            ['30d', ages.filter((age) => age > 30 * DAY).length],
            ['90d', ages.filter((age) => age > 90 * DAY).length],
          ]),
        });
        expect(simulator.requestCounts()[LIST_PATH]).toBe(pages);
        if (pages > 1) walked.multiPage += 1;
      }
      // The world must exercise what this test is about: several pages, no owner, several owners.
      expect(walked.multiPage).toBeGreaterThan(0);
      expect(walked.unowned).toBeGreaterThan(0);
      expect(walked.multiOwner).toBeGreaterThan(0);
    },
  );
});

describe('pollFlakyTests over a very large list', () => {
  it('walks a consistent 250,000-test list (2,500 pages) to its end: the page bound comes from total_rows', async () => {
    const length = 250_000;
    // Rows made when a page asks for them: the list is consistent, not held in memory.
    const server = await startListFake({
      length,
      slice: (start = 0, end = length) =>
        Array.from({ length: Math.min(end, length) - start }, (_unused, offset) =>
          generatedTest(start + offset, BASE + ((start + offset) % 1000) * HOUR),
        ),
    });

    const snapshot = await poll(server.apiUrl);

    expect(snapshot.count).toBe(length);
    // Every row walked: OWNER_SHAPES gives @acme/web to two tests in five.
    expect(snapshot.byCodeowner.get('@acme/web')).toBe((length / 5) * 2);
    expect(snapshot.byCodeowner.get(NO_CODEOWNER)).toBe(length / 5);
    expect(snapshot.quarantinedOlderThan.get('7d')).toBe(length);
    // Its cost: one call per page, no more (each is counted in trunk_exporter_api_requests_total).
    expect(listRequests(server)).toHaveLength(length / 100);
  }, 60_000);

  it('stops a list whose total_rows (10^15) and tokens never end after 5,000 pages, naming the list and the bound', async () => {
    // An audit's hostile upstream: total_rows 10^15 and a fresh next_page_token on every page, so
    // the bound from total_rows (10^13 pages) never comes.
    const length = 1e15;
    const server = await startListFake({
      length,
      slice: (start = 0, end = length) =>
        Array.from({ length: end - start }, (_unused, offset) =>
          generatedTest(start + offset, BASE + ((start + offset) % 1000) * HOUR),
        ),
    });

    const error = await rejectionOf(poll(server.apiUrl));

    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toBe(
      'quarantine list of github.com/acme/web has more than 5000 pages (500000 tests, the most ' +
        'walked; total_rows 1000000000000000); stopped',
    );
    // Twice the 250,000-test list above, and not one call more.
    expect(listRequests(server)).toHaveLength(5000);
  }, 90_000);

  it('keeps at most 10,000 owners of a list naming a new owner on every row, the rest under other', async () => {
    // The audit's hostile list names owner @o<row> on each of its rows: 15,000 tests, 15,000 owners.
    const length = 15_000;
    const server = await startListFake({
      length,
      slice: (start = 0, end = length) =>
        Array.from({ length: Math.min(end, length) - start }, (_unused, offset) => ({
          ...generatedTest(start + offset, BASE),
          codeowners: [`@o${String(start + offset)}`],
        })),
    });

    const snapshot = await poll(server.apiUrl);

    expect(snapshot.count).toBe(length);
    // The first 10,000 owners met keep their count of one test; the other 5,000 tests are `other`.
    expect(snapshot.byCodeowner.size).toBe(10_001);
    expect(snapshot.byCodeowner.get('@o9999')).toBe(1);
    expect(snapshot.byCodeowner.has('@o10000')).toBe(false);
    expect(snapshot.byCodeowner.get('other')).toBe(5_000);
  });
});

function refOf(repository: SimulatedRepository): RepoRef {
  return { host: repository.host, owner: repository.owner, name: repository.name };
}

/** One poll of the quarantine list of REPO with `details: false`. */
async function pollTotal(apiUrl: string) {
  const { client } = makeClient(apiUrl);
  return pollFlakyTests({
    reader: client,
    repo: REPO,
    repoName: 'github.com/acme/web',
    orgUrlSlug: SIMULATOR_ORG_SLUG,
    details: false,
    options: {},
    now: () => TAKEN_AT,
  });
}

describe('pollFlakyTests without per-test detail', () => {
  it('reads the total from one call for the smallest page, and claims no owners or oldest quarantine', async () => {
    const tests = Array.from({ length: 430 }, (_unused, index) =>
      generatedTest(index, BASE + index * HOUR),
    );
    const server = await startListFake(tests);

    const snapshot = await pollTotal(server.apiUrl);

    expect(listRequests(server).map((request) => request.page_query)).toEqual([
      { page_size: 1, page_token: '' },
    ]);
    expect(snapshot).toEqual({
      kind: 'flaky_tests',
      repo: 'github.com/acme/web',
      takenAt: TAKEN_AT,
      quarantine: {
        count: 430,
        byCodeowner: new Map(),
        oldestQuarantinedAt: undefined,
        quarantinedRecently: new Map(),
        quarantinedOlderThan: new Map(),
      },
    });
  });

  it('walks the list for its count when the answer has no total_rows, the last page no token', async () => {
    const tests = Array.from({ length: 230 }, (_unused, index) =>
      generatedTest(index, BASE + index * HOUR),
    );
    const server = await startListFake(tests, false);

    const snapshot = await pollTotal(server.apiUrl);

    // One call for the total, then the list walked from its start at the largest page size.
    expect(listRequests(server).map((request) => request.page_query.page_size)).toEqual([
      1, 100, 100, 100,
    ]);
    expect(snapshot.quarantine?.count).toBe(230);
    expect(snapshot.quarantine?.byCodeowner).toEqual(new Map());
  });
});

import type { Logger } from '../../log/logger.js';
import type { FlakyTestsSnapshot, QuarantinedTests } from '../../snapshot/types.js';
import { ENDPOINTS, MAX_PAGE_SIZE, MIN_PAGE_SIZE, type RepoRef } from '../../trunk/schemas.js';
import { SeenIds } from '../../trunk/seenIds.js';
import { countOwners, earliest, quarantineAgeCounts } from '../testCounts.js';
import { parseTimestampSeconds } from '../timestamps.js';
import type { ReadOptions } from '../readOptions.js';
import type { TrunkReader } from './trunkReader.js';

/**
 * Pages walked beyond what the largest total_rows seen promises before the walk is called broken:
 * offset paging over a list that changes mid-walk may legitimately need one more. The bound comes
 * from total_rows alone, not a constant: a consistent list of any size is walked to its end (each
 * page is bounded by trunk.maxResponseBytes, and its calls are counted in the API metrics).
 */
export const EXTRA_PAGES = 2;

/**
 * Pages walked at most, whatever total_rows says: twice the largest list documented as walked to
 * its end (250,000 tests, 2,500 pages), so a total_rows of 10^15 with tokens that never end cannot
 * walk, and hold its tests' ids and times, for ever.
 */
export const MAX_QUARANTINE_PAGES = 5_000;

/**
 * The longest next_page_token a walk sends back, in characters. Trunk's are short opaque tokens;
 * each page's request carries the token back, so one of megabytes (within trunk.maxResponseBytes)
 * would be uploaded again with every page of a walk.
 */
export const MAX_PAGE_TOKEN_LENGTH = 8192;

/**
 * Raised when the API's paging cannot be trusted (a repeated token, more pages than promised, an
 * empty page that says more follow).
 */
export class PaginationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PaginationError';
  }
}

interface FlakyTestsPollRequest {
  readonly reader: TrunkReader;
  readonly repo: RepoRef;
  readonly repoName: string;
  readonly orgUrlSlug: string;
  /** Walk every page (per-owner counts, oldest quarantine); false reads only the total. */
  readonly details?: boolean;
  readonly options: ReadOptions;
  readonly now: () => number;
  /** Told about paging that is odd but still usable (total_rows moving mid-walk). */
  readonly logger?: Logger;
}

/**
 * One poll of a repository's quarantine list: every page at the largest page size, counting tests
 * per code owner and finding the oldest quarantine. Tokens are opaque and only ever taken from the
 * previous answer; a token seen twice ends the walk with an error instead of looping.
 */
export async function pollFlakyTests(request: FlakyTestsPollRequest): Promise<FlakyTestsSnapshot> {
  const quarantine = await readQuarantinedTests(request);
  return { kind: 'flaky_tests', repo: request.repoName, takenAt: request.now(), quarantine };
}

/** The repository's quarantined tests from its v1 quarantine list, as pollFlakyTests reads them. */
export async function readQuarantinedTests(
  request: FlakyTestsPollRequest,
): Promise<QuarantinedTests> {
  if (request.details === false) return readQuarantineTotal(request);
  const { reader, repo, orgUrlSlug, options } = request;
  const byCodeowner = new Map<string, number>();
  // Hashes, not strings: a walk of 500,000 tests keeps 8 bytes (a slot) per test and page token.
  const seenTests = new SeenIds();
  const seenTokens = new SeenIds();
  const quarantineTimes: number[] = [];
  let totalRows: number | undefined;
  let countChanged = false;
  // Undefined until a page states total_rows: until then only MAX_QUARANTINE_PAGES bounds the walk.
  let mostRowsPromised: number | undefined;
  let rowsWalked = 0;
  let pageToken = '';
  // Counted as a v2 walk stopped is (paging_stopped), under the list's endpoint.
  const stopped = (message: string): PaginationError => {
    reader.reportAnomaly(ENDPOINTS.listQuarantinedTests, 'paging_stopped', 1);
    return new PaginationError(message);
  };

  for (let pages = 0; ; pages++) {
    if (pages >= MAX_QUARANTINE_PAGES) {
      throw stopped(
        `quarantine list of ${request.repoName} has more than ${MAX_QUARANTINE_PAGES} pages ` +
          `(${MAX_QUARANTINE_PAGES * MAX_PAGE_SIZE} tests, the most walked; total_rows ` +
          `${mostRowsPromised ?? 'not sent'}); stopped`,
      );
    }
    const promisedPages =
      mostRowsPromised === undefined
        ? MAX_QUARANTINE_PAGES
        : Math.ceil(mostRowsPromised / MAX_PAGE_SIZE) + EXTRA_PAGES;
    if (pages > 0 && pages >= promisedPages) {
      throw stopped(
        `quarantine list of ${request.repoName} has more pages than total_rows ` +
          `(${mostRowsPromised ?? 0}) promises; stopped after ${pages} pages`,
      );
    }
    const page = await reader.listQuarantinedTests(
      repo,
      orgUrlSlug,
      { pageSize: MAX_PAGE_SIZE, pageToken },
      options,
    );
    const rows = page.page.total_rows ?? undefined;
    // One line a walk: the first page whose count differs from the first page's.
    if (totalRows !== undefined && rows !== undefined && rows !== totalRows && !countChanged) {
      countChanged = true;
      request.logger?.warn(
        { repo: request.repoName, page: pages + 1, firstTotalRows: totalRows, totalRows: rows },
        `quarantine list of ${request.repoName} changed during the walk: total_rows went from ` +
          `${totalRows} to ${rows} on page ${pages + 1}; reporting the first page's count`,
      );
    }
    totalRows ??= rows;
    if (rows !== undefined) mostRowsPromised = Math.max(mostRowsPromised ?? 0, rows);
    for (const test of page.quarantined_tests) {
      // Offset paging over a list that changes can repeat a row; count each test once. A row
      // without a test_case_id (or with an empty one) cannot be told from another: it is counted
      // as it comes.
      if (test.test_case_id !== undefined && test.test_case_id !== '') {
        if (!seenTests.firstTime(`${test.test_case_id}\u0000${test.variant ?? ''}`)) continue;
      }
      rowsWalked++;
      countOwners(byCodeowner, test.codeowners);
      const quarantinedAt = parseTimestampSeconds(test.quarantined_at);
      if (quarantinedAt !== undefined) quarantineTimes.push(quarantinedAt);
    }
    const next = page.page.next_page_token ?? '';
    if (next === '') break;
    if (next.length > MAX_PAGE_TOKEN_LENGTH) {
      throw stopped(
        `quarantine list of ${request.repoName} gives a next_page_token of ${next.length} ` +
          `characters on page ${pages + 1}, longer than ${MAX_PAGE_TOKEN_LENGTH}; stopped`,
      );
    }
    if (page.quarantined_tests.length === 0) {
      throw stopped(
        `quarantine list of ${request.repoName} sent an empty page ${pages + 1} with a next_page_token`,
      );
    }
    if (!seenTokens.firstTime(next)) {
      throw stopped(
        `quarantine list of ${request.repoName} repeated a page token after ${pages + 1} pages`,
      );
    }
    pageToken = next;
  }

  return {
    // Without a total from the API, the tests walked (each once) are the count.
    count: totalRows ?? rowsWalked,
    byCodeowner,
    oldestQuarantinedAt: earliest(quarantineTimes),
    ...quarantineAgeCounts(quarantineTimes, request.now()),
  };
}

/** Without per-test detail only `page.total_rows` is needed: one call, for the smallest page. */
async function readQuarantineTotal(request: FlakyTestsPollRequest): Promise<QuarantinedTests> {
  const page = await request.reader.listQuarantinedTests(
    request.repo,
    request.orgUrlSlug,
    { pageSize: MIN_PAGE_SIZE, pageToken: '' },
    request.options,
  );
  let count = page.page.total_rows ?? undefined;
  if (count === undefined) {
    // No total to read: an empty last page is 0, anything else is counted by walking the list.
    const last = (page.page.next_page_token ?? '') === '' && page.quarantined_tests.length === 0;
    count = last ? 0 : (await readQuarantinedTests({ ...request, details: true })).count;
  }
  return {
    count,
    byCodeowner: new Map(),
    oldestQuarantinedAt: undefined,
    // Windows and ages need every test's quarantined_at: unknown without the rows, so not exported.
    quarantinedRecently: new Map(),
    quarantinedOlderThan: new Map(),
  };
}

// The organization's test list (`GET /v2/tests`): its filters, the path it answers at (the live
// service's `/v2/tests`, or `/v2/test-cases`, the one Trunk's definition named before 2026-10-06),
// and its walk, whose rows are given away page by page, so that a walk of an organization's tests
// never holds them all.
import type { CallOptions } from './client.js';
import { TrunkApiError } from './errors.js';
import { checkTestsPage } from './responseAnomalies.js';
import { walkV2List, type V2Reader } from './v2ListWalk.js';
import { V2_MAX_TEST_LIST_PAGES } from './v2Paging.js';
import { organizationTarget, pageQuery } from './v2Requests.js';
import {
  V2_ENDPOINTS,
  v2TestPageSchema,
  type V2Test,
  type V2TestMetricsPeriod,
} from './v2Schemas.js';

/** Which tests of the organization to list (`GET /v2/tests` filters, in v2's spelling). */
export interface V2TestFilter {
  readonly quarantineState?: 'quarantined' | 'notQuarantined';
  /** Test statuses: `healthy`, `flaky`, `broken`. */
  readonly statuses?: readonly string[];
  /** Each test's metrics over this window (`include=metrics&period=`); none when absent. */
  readonly metricsPeriod?: V2TestMetricsPeriod;
}

/** The test list's paths: the live service's, and the one Trunk's definition names (before 2026-10-06). */
type TestListPath = 'tests' | 'test-cases';

/**
 * Which path the organization's test list answers at: `/v2/tests`, and `/v2/test-cases` for an
 * organization still answered on the old path; the one that answered is kept until it answers 404
 * in turn. Outlives the clients of reloads, as what it learned stays true.
 */
export class TestListPaths {
  #current: TestListPath = 'tests';

  /** The path to ask first. */
  get current(): TestListPath {
    return this.#current;
  }

  /** The path that answers 404 is not the organization's: the other is asked from now on. */
  notFound(path: TestListPath): TestListPath {
    this.#current = path === 'tests' ? 'test-cases' : 'tests';
    return this.#current;
  }
}

/**
 * Every test of the organization the filter selects, all pages, each page's rows given to `take`
 * as they come; at `/v2/test-cases` when `/v2/tests` answers 404 (`paths`), the same operation
 * under its former path.
 */
export async function listTests(
  client: V2Reader,
  paths: TestListPaths,
  filter: V2TestFilter,
  /** What is listed, for messages: `quarantined tests`. */
  what: string,
  take: (tests: readonly V2Test[]) => void,
  options: CallOptions,
): Promise<void> {
  const filters: Record<string, string> = {};
  if (filter.quarantineState !== undefined) filters.quarantineState = filter.quarantineState;
  if (filter.statuses !== undefined) filters.status = filter.statuses.join(',');
  if (filter.metricsPeriod !== undefined) {
    filters.include = 'metrics';
    filters.period = filter.metricsPeriod;
  }
  const walked = { anyPage: false };
  const walk = (path: TestListPath) => {
    const endpoint = path === 'tests' ? V2_ENDPOINTS.listTests : V2_ENDPOINTS.listTestCases;
    return walkV2List(
      client,
      (cursor) =>
        client.readV2(
          organizationTarget(endpoint),
          `${path}?${pageQuery(filters, cursor)}`,
          v2TestPageSchema,
          (response, report) =>
            checkTestsPage(response, report, filter.metricsPeriod !== undefined),
          options,
        ),
      { what: `the list of ${what}`, endpoint },
      (tests) => {
        walked.anyPage = true;
        take(tests);
      },
      V2_MAX_TEST_LIST_PAGES,
    );
  };
  const first = paths.current;
  try {
    await walk(first);
  } catch (error) {
    // A 404 after pages were taken is not the former path: walking again would count them twice.
    if (!(error instanceof TrunkApiError) || error.status !== 404 || walked.anyPage) throw error;
    await walk(paths.notFound(first));
  }
}

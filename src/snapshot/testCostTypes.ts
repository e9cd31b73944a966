// What flaky tests cost and how the tests are organized, as API v2 tells them: the sums of the
// per-test metrics of a repository's flaky and broken tests over Trunk's window, and the
// organization's test collections.

/** A repository's tests of one status, summed over Trunk's metrics window. */
export interface TestCostSums {
  /** Sum of `failureCount`: failing runs in the window. */
  readonly failedRuns: number;
  /** Sum of `runCount`. */
  readonly runs: number;
  /** Sum of `prsImpacted`: a pull request hit by two tests counts twice. */
  readonly pullRequestsImpacted: number;
}

/** The cost of a repository's flaky and broken tests over one window. */
export interface TestCost {
  /** Trunk's `period` the metrics were read with (`7d`): the `window` label. */
  readonly window: string;
  /**
   * Per status (as trunk_flaky_tests_unhealthy labels it): the sums. A status with no test is 0;
   * a status one of whose tests came without metrics (Trunk did not embed them) is left out.
   */
  readonly byStatus: ReadonlyMap<string, TestCostSums>;
}

/** One test collection of the organization. */
export interface TestCollection {
  /** The collection's name: the `collection` label. */
  readonly name: string;
  /** `testCaseCount`: distinct test cases seen in it. */
  readonly testCases: number;
  readonly quarantineEnabled: boolean;
}

/** The organization's test collections as of one read, each name once. */
export interface TestCollections {
  readonly collections: readonly TestCollection[];
  /** Unix seconds when the list was read. */
  readonly readAt: number;
}

// The reads API v2 sources make (the API key): each declared once, as data (readDeclaration.ts).
import { DEFAULT_DISCOVERY_MAX_TARGETS } from '../../config/schema.js';
import { readsTestCollections } from '../../config/targets.js';
import {
  V2_MAX_LIVE_ENTRY_PAGES,
  V2_MAX_PAGES,
  V2_MAX_TEST_LIST_PAGES,
  V2_MAX_WINDOW_PAGES,
} from '../../trunk/v2Paging.js';
import { V2_ENDPOINTS } from '../../trunk/v2Schemas.js';
import { V2_MAX_RUN_PAGES } from '../../trunk/v2VerificationRunSchemas.js';
import { MAX_FOLLOWED_RUNS } from '../../flow/verificationRuns.js';
import { BUDGET_ASSUMPTIONS, pages } from '../readCost.js';
import type { ReadDeclaration } from '../readDeclaration.js';
import { PERIODIC_EXIT_READ_POLLS } from './v2ExitLookup.js';
import { LAST_MERGE_WINDOWS_SECONDS } from './v2LastMerge.js';
import { MAX_REPOSITORY_LOOKUPS_PER_READ } from './v2RepositoryNames.js';
import { MAX_HISTORY_CALLS_PER_READ } from './v2QueueEntryHistoryRead.js';
import { queueListPageBound } from './v2QueueDirectory.js';
import { V2_ENTRY_HISTORY_MAX_IDS } from '../../trunk/v2EntryHistorySchemas.js';

/**
 * `value` with a comma every three digits. Not toLocaleString: its first call loads ICU's data,
 * resident memory the exporter has no other use for.
 */
function withCommas(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+$)/g, ',');
}

/**
 * The organization's list of merge queues: walked 100 rows a page, at most V2_MAX_PAGES pages, and
 * with discovery on at most what discovery.maxTargets can keep (queueListPageBound).
 */
const QUEUE_LIST_PAGED =
  `pages ≤ ${withCommas(V2_MAX_PAGES)}; with discovery, ≤ ` +
  `${String(queueListPageBound(DEFAULT_DISCOVERY_MAX_TARGETS).pages)} ` +
  `(more for a maxTargets over ${withCommas(DEFAULT_DISCOVERY_MAX_TARGETS)})`;

/** A queue's list over a window (concluded entries, testing results). */
const WINDOW_PAGED = `pages ≤ ${String(V2_MAX_WINDOW_PAGES)}`;

const ELSE_PERIODIC = `else every ${String(PERIODIC_EXIT_READ_POLLS)}th poll`;

/** The organization's merge queues, each with its state and settings (V2QueueDirectory). */
export const QUEUE_LIST = {
  name: 'merge queues',
  api: 'v2',
  endpoints: [V2_ENDPOINTS.listMergeQueues],
  scope: 'organization',
  cadence: { kind: 'shared', interval: 'mergeQueue', refreshedByEvents: false },
  maxCalls: QUEUE_LIST_PAGED,
  part: 'queue',
  failure: { effect: 'poll fails' },
  cost: {
    calls: ({ organization }) => ({ [V2_ENDPOINTS.listMergeQueues]: pages(organization.queues) }),
    assumes: [],
  },
} as const satisfies ReadDeclaration;

/** A queue's live pull requests, readiness included (v2MergeQueuePoll.ts). */
export const LIVE_PULL_REQUESTS = {
  name: 'live pull requests',
  api: 'v2',
  endpoints: [V2_ENDPOINTS.listQueuePullRequests],
  scope: 'queue',
  cadence: { kind: 'every poll' },
  maxCalls: `pages ≤ ${String(V2_MAX_LIVE_ENTRY_PAGES)}`,
  part: 'queue',
  failure: { effect: 'poll fails' },
  // Fewer than 100 PRs a queue: one page.
  cost: {
    calls: () => ({ [V2_ENDPOINTS.listQueuePullRequests]: 1 }),
    assumes: ['pullRequestsPerQueue'],
  },
} as const satisfies ReadDeclaration;

/** The entries of a queue that concluded since the last read: how PRs left (v2ExitLookup.ts). */
export const CONCLUDED_ENTRIES = {
  name: 'concluded entries',
  api: 'v2',
  endpoints: [V2_ENDPOINTS.listQueuePullRequests],
  scope: 'queue',
  cadence: {
    kind: 'some polls',
    when: `a PR left or is back in \`not_ready\`; ${ELSE_PERIODIC}`,
  },
  maxCalls: WINDOW_PAGED,
  part: 'flow',
  failure: {
    effect: 'taken by the read',
    then: 'asked again at the next poll; the PRs it is for count `unknown` once gone `staleAfterSeconds`',
  },
  cost: {
    calls: () => ({
      [V2_ENDPOINTS.listQueuePullRequests]: BUDGET_ASSUMPTIONS.exitReadsPerQueuePoll,
    }),
    assumes: ['exitReadsPerQueuePoll'],
  },
} as const satisfies ReadDeclaration;

/** How entries that concluded and were submitted again ended (v2Resubmissions.ts). */
export const RESUBMITTED_ENTRIES = {
  name: 'testing results of resubmitted entries',
  api: 'v2',
  endpoints: [V2_ENDPOINTS.listTestingResults],
  scope: 'queue',
  cadence: {
    kind: 'on an event',
    event: 'a read of concluded entries that lists one in a live state',
  },
  maxCalls: WINDOW_PAGED,
  part: 'flow',
  failure: { effect: 'taken by the read', then: 'the exits it is for count `unknown`' },
  cost: { calls: () => ({}), assumes: [] },
} as const satisfies ReadDeclaration;

/** A queue's latest merge before the exporter watched it (v2LastMerge.ts). */
export const LAST_MERGE = {
  name: 'last merge',
  api: 'v2',
  endpoints: [V2_ENDPOINTS.listQueuePullRequests],
  scope: 'queue',
  cadence: { kind: 'on an event', event: "the queue's first poll (its ledger starts)" },
  maxCalls: `${String(LAST_MERGE_WINDOWS_SECONDS.length)} windows, ${WINDOW_PAGED} each`,
  part: 'flow',
  failure: {
    effect: 'taken by the read',
    then: 'not read again; the last merge waits for the next merge seen',
  },
  cost: { calls: () => ({}), assumes: [] },
} as const satisfies ReadDeclaration;

/** A queue's testing attempts since the last read (v2TestingResultsRead.ts). */
export const TESTING_RESULTS = {
  name: 'testing results',
  api: 'v2',
  endpoints: [V2_ENDPOINTS.listTestingResults],
  scope: 'queue',
  cadence: {
    kind: 'some polls',
    when: `a PR left \`testing\` or the queue, or reached \`testsPassed\`; ${ELSE_PERIODIC}`,
  },
  maxCalls: WINDOW_PAGED,
  part: 'testing',
  failure: { effect: 'part late' },
  // Fewer than 100 attempts end between two reads: one page.
  cost: {
    calls: () => ({
      [V2_ENDPOINTS.listTestingResults]: BUDGET_ASSUMPTIONS.testingReadsPerQueuePoll,
    }),
    assumes: ['testingReadsPerQueuePoll'],
  },
} as const satisfies ReadDeclaration;

/**
 * A queue's verification runs since the oldest still in progress (v2VerificationRunsRead.ts), when
 * `reads.verificationRuns` is on, and each run in progress the list no longer reaches (over a day)
 * by id. Its failure is logged and the read made again at the next poll; its families go once its
 * last good read is older than staleAfterSeconds.
 */
export const VERIFICATION_RUNS = {
  name: 'verification runs',
  api: 'v2',
  endpoints: [V2_ENDPOINTS.listVerificationRuns, V2_ENDPOINTS.getVerificationRun],
  scope: 'queue',
  cadence: {
    kind: 'some polls',
    when: 'a PR entered or left `testing`, reached `testsPassed` or left the queue, a run in progress has no PR in `testing` on it (it lists none, none is left, or they test on a newer run), or the last read failed',
  },
  maxCalls: `pages ≤ ${String(V2_MAX_RUN_PAGES)}, + 1 per run in progress for over a day (≤ ${String(MAX_FOLLOWED_RUNS)})`,
  part: 'queue',
  failure: {
    effect: 'taken by the read',
    then: 'read again at the next poll; its families hidden once its last good read is older than `staleAfterSeconds`',
  },
  // Fewer than 100 runs begin between two reads: one page; and no run is stuck in progress for
  // over a day, so none is read by id.
  cost: {
    calls: ({ config }) =>
      config.reads.verificationRuns
        ? {
            [V2_ENDPOINTS.listVerificationRuns]:
              BUDGET_ASSUMPTIONS.verificationRunReadsPerQueuePoll,
          }
        : {},
    assumes: ['verificationRunReadsPerQueuePoll'],
  },
} as const satisfies ReadDeclaration;

/**
 * The queue-entry histories of the pull requests the polls saw change or leave
 * (v2QueueEntryHistoryRead.ts), when `reads.queueEntryHistory` is on: one read for the whole
 * organization per merge-queue interval, 50 pull requests a call, that no poll waits for. Its
 * failure is logged and the read made again at the next interval; its families go once its last
 * good read is older than staleAfterSeconds.
 */
export const QUEUE_ENTRY_HISTORY = {
  name: 'queue-entry histories',
  api: 'v2',
  endpoints: [V2_ENDPOINTS.listQueueEntryHistory],
  scope: 'organization',
  cadence: { kind: 'shared', interval: 'mergeQueue', refreshedByEvents: false },
  maxCalls: `${String(MAX_HISTORY_CALLS_PER_READ)} (${String(V2_ENTRY_HISTORY_MAX_IDS)} pull requests each, 5 a second)`,
  part: 'flow',
  failure: {
    effect: 'taken by the read',
    then: 'read again at the next interval (an answer over `trunk.maxResponseBytes` is asked in halves instead, and a pull request whose timeline alone is over it is not asked again); its families hidden once its last good read is older than `staleAfterSeconds`',
  },
  // The PRs that change state in an interval in the queues whose polls ask (a shard asks for its
  // own), 50 a call.
  cost: {
    calls: ({ config, askedBy, periodSeconds }) => {
      if (!config.reads.queueEntryHistory || askedBy === 0) return {};
      const { pullRequestsPerQueue, stateChangesPerPullRequestPerHour } = BUDGET_ASSUMPTIONS;
      const changes =
        (askedBy * pullRequestsPerQueue * stateChangesPerPullRequestPerHour * periodSeconds) / 3600;
      return {
        [V2_ENDPOINTS.listQueueEntryHistory]: Math.ceil(changes / V2_ENTRY_HISTORY_MAX_IDS),
      };
    },
    assumes: ['pullRequestsPerQueue', 'stateChangesPerPullRequestPerHour'],
  },
} as const satisfies ReadDeclaration;

/** Besides its pages, what each organization-wide test list may call (v2TestDirectory.ts). */
const NAMING = `pages ≤ ${withCommas(V2_MAX_TEST_LIST_PAGES)}, + ≤ ${withCommas(MAX_REPOSITORY_LOOKUPS_PER_READ)} repository lookups (ids not named yet), + 1 per target whose repository no list names`;

/**
 * One of the organization's test lists, by repository (V2TestDirectory): `tests` of them per
 * repository with tests, as the budget assumes.
 */
function organizationTestList(
  name: string,
  part: 'quarantine' | 'unhealthy',
  tests: 'quarantinedTestsPerRepository' | 'unhealthyTestsPerRepository',
) {
  return {
    name,
    api: 'v2',
    endpoints: [
      V2_ENDPOINTS.listTests,
      V2_ENDPOINTS.listTestCases,
      V2_ENDPOINTS.getRepository,
      V2_ENDPOINTS.findRepositories,
    ],
    scope: 'organization',
    cadence: { kind: 'shared', interval: 'flakyTests', refreshedByEvents: true },
    maxCalls: NAMING,
    part,
    failure: { effect: 'part down' },
    cost: {
      calls: ({ organization }) => ({
        [V2_ENDPOINTS.listTests]: pages(
          organization.repositoriesWithTests * BUDGET_ASSUMPTIONS[tests],
        ),
      }),
      assumes: [tests],
    },
  } as const satisfies ReadDeclaration;
}

/** The organization's quarantined tests (`GET /v2/tests?quarantineState=quarantined`). */
export const QUARANTINED_TESTS = organizationTestList(
  'quarantined tests',
  'quarantine',
  'quarantinedTestsPerRepository',
);

/**
 * The organization's test collections (`GET /v2/test-collections`, v2TestCollectionsRead.ts): the
 * newest 100, one page when Trunk fills its pages (shorter and empty pages with a cursor are
 * followed, as in every walk), shared by the flaky-tests targets, when `reads.testCollections` is
 * on. Its failure leaves the targets up and hides only the collection families, after
 * staleAfterSeconds.
 */
export const TEST_COLLECTIONS = {
  name: 'test collections',
  api: 'v2',
  endpoints: [V2_ENDPOINTS.listTestCollections],
  scope: 'organization',
  cadence: { kind: 'shared', interval: 'flakyTests', refreshedByEvents: false },
  maxCalls: '1 (the 100 newest collections); 120 when pages hold fewer',
  part: 'collections',
  failure: { effect: 'part late' },
  cost: {
    // Only the shard that exports the collections reads them; the others show the endpoint at 0.
    calls: ({ config }) =>
      config.reads.testCollections
        ? { [V2_ENDPOINTS.listTestCollections]: readsTestCollections(config) ? 1 : 0 }
        : {},
    assumes: [],
  },
} as const satisfies ReadDeclaration;

/** The organization's flaky and broken tests (`GET /v2/tests?status=flaky,broken`). */
export const UNHEALTHY_TESTS = organizationTestList(
  'flaky and broken tests',
  'unhealthy',
  'unhealthyTestsPerRepository',
);

// Merge-queue flow: counters and histograms derived from what changed between consecutive
// successful polls (src/flow/), rendered from each queue's ledger in the snapshot store. Every
// configured queue with a ledger counts, stale or not: counters only count what was seen.
import { PERIODIC_EXIT_READ_POLLS } from '../poller/v2/v2ExitLookup.js';
import { EVICTION_LOOP_WINDOW_SECONDS } from '../flow/evictions.js';
import { LAST_MERGE_WINDOWS_SECONDS } from '../poller/v2/v2LastMerge.js';
import { FINAL_PR_STATES } from '../snapshot/exitOutcome.js';
import { MAX_UNKNOWN_STATES, OTHER_STATE, type QueueFlow } from '../snapshot/queueFlowTypes.js';
import type { TargetStatus } from '../snapshot/types.js';
import { ENDPOINTS } from '../trunk/schemas.js';
import { recentExemplarsSince } from './exemplarWindow.js';
import { samplesByKey, type FamilySettings, type PerTargetFamily, type Sample } from './family.js';
import { REFRESHED_BY, formatInterval } from './help.js';
import { NAMESPACE, fqName } from './naming.js';

const SUBSYSTEM = 'merge_queue';

function seen(settings: FamilySettings): string {
  return (
    `Derived from consecutive successful polls of the queue's pull requests (${REFRESHED_BY.pullRequests.v1} ` +
    `on API v1, ${REFRESHED_BY.pullRequests.v2} on API v2; every ` +
    `${formatInterval(settings.mergeQueueIntervalSeconds)}); starts at 0 when the exporter starts`
  );
}

/** What a poll cannot see of a PR that comes and goes between two polls, and what API v2 reads anyway. */
const EXITS_BETWEEN_POLLS =
  'A pull request that enters and leaves between two polls, or leaves and is submitted again, is ' +
  "never seen through API v1; through API v2 the reads of the queue's concluded entries count it " +
  `(at most ${PERIODIC_EXIT_READ_POLLS} polls late).`;
/** How far back the read at start looks for the last merge, in days. */
const LAST_MERGE_LOOKBACK_DAYS = Math.max(...LAST_MERGE_WINDOWS_SECONDS) / 86_400;

const MISSED = 'A pull request that enters and leaves between two polls is never seen.';
const CAPPED =
  `At most ${MAX_UNKNOWN_STATES} undocumented state values per queue are kept as labels; ` +
  `later ones count as ${OTHER_STATE}`;

/** The samples of a queue's ledger, given its repo and branch; none without a ledger. */
function ofQueueFlow(
  samples: (flow: QueueFlow, repo: string, branch: string) => Iterable<Sample>,
): (status: TargetStatus) => Iterable<Sample> {
  return ({ target, queueFlow }) =>
    queueFlow === undefined ? [] : samples(queueFlow, target.repo, target.branch);
}

/** Which witness counted each exit: only webhooks give it a second one to count. */
export const EXITS_BY_SOURCE = fqName(
  NAMESPACE,
  SUBSYSTEM,
  'pull_request_exits_by_source',
  'total',
);

/** The flow families, in page order: one per queue, from its ledger. */

export const QUEUE_FLOW_FAMILIES: readonly PerTargetFamily[] = [
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'pull_requests_exited', 'total'),
    help: (settings) =>
      'Pull requests that left the merge queue, by final state: on API v1 from one ' +
      `${ENDPOINTS.getSubmittedPullRequest} lookup (unknown when it cannot tell), on API v2 from the ` +
      `queue's concluded entries (${REFRESHED_BY.pullRequests.v2}?concludedAfter=…; a resubmitted ` +
      "entry's outcome from its testing results' entryConclusion). " +
      `${seen(settings)}. ${EXITS_BETWEEN_POLLS}`,
    type: 'counter',
    labelNames: ['repo', 'branch', 'outcome'],
    scope: 'target',
    samples: ofQueueFlow((flow, repo, branch) => samplesByKey([repo, branch], flow.counts.exited)),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'repeated_failures', 'total'),
    help: (settings) =>
      'Failed exits of pull requests from the merge queue (outcome="failed" of ' +
      'trunk_merge_queue_pull_requests_exited_total) within ' +
      `${formatInterval(EVICTION_LOOP_WINDOW_SECONDS)} of an earlier failed exit of the same pull request: ` +
      'each is one more eviction of a pull request evicted before (an eviction loop), whether Trunk ' +
      'resubmitted it as a new queue entry or reused the old one. A retest within one entry and the ' +
      'other pull requests of a split batch stay in the queue: no exits, no evictions. ' +
      `${seen(settings)}. ${EXITS_BETWEEN_POLLS}`,
    type: 'counter',
    labelNames: ['repo', 'branch'],
    scope: 'target',
    samples: ofQueueFlow((flow, repo, branch) => [
      { labels: [repo, branch], value: flow.counts.repeatedFailures },
    ]),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'state_transitions', 'total'),
    help: (settings) =>
      `Pull request state changes seen between two polls (testing to pending is a restart); ` +
      `several changes between two polls count as one from the first state to the last, but through API v2 ` +
      `with reads.queueEntryHistory each counts once, from the pull request's queue-entry history. ${seen(settings)}. ${MISSED} ` +
      `${CAPPED}.`,
    type: 'counter',
    labelNames: ['repo', 'branch', 'from', 'to'],
    scope: 'target',
    samples: ofQueueFlow((flow, repo, branch) =>
      Array.from(flow.counts.transitions.values(), ({ from, to, count }) => ({
        labels: [repo, branch, from, to],
        value: count,
      })),
    ),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'time_in_queue', 'seconds'),
    help: (settings) =>
      'Time pull requests spent in the merge queue, observed when they leave, in seconds: from their ' +
      'first state change (or the poll that first saw them) to their final state change (or the poll ' +
      'that saw them gone). For PRs queued before the exporter started, a lower bound. merged, ' +
      'failed and cancelled are written at 0 from the start, unknown from its first exit. In ' +
      `OpenMetrics a bucket carries its latest recent exit's pull request as an exemplar (pr). ${seen(settings)}. ${EXITS_BETWEEN_POLLS}`,
    type: 'histogram',
    labelNames: ['repo', 'branch', 'outcome'],
    scope: 'target',
    samples: (status, settings) =>
      [...(status.queueFlow?.counts.timeInQueue ?? [])]
        // The final states are written at 0 before the first exit (so that rate() sees it);
        // `unknown` (API v1: a lookup could not tell) from its first.
        .filter(([outcome, histogram]) => histogram.count > 0 || FINAL_PR_STATES.has(outcome))
        .map(([outcome, histogram]) => ({
          labels: [status.target.repo, status.target.branch, outcome],
          histogram,
          exemplarsSince: recentExemplarsSince(status, settings),
        })),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'time_in_state', 'seconds'),
    help: (settings) =>
      'Time pull requests spent in a state, observed when a poll sees them leave it, in seconds, ' +
      `from stateChangedAt to stateChangedAt where the API gives them. ${seen(settings)}. ${MISSED} ${CAPPED}.`,
    type: 'histogram',
    labelNames: ['repo', 'branch', 'state'],
    scope: 'target',
    samples: ofQueueFlow((flow, repo, branch) =>
      Array.from(flow.counts.timeInState, ([state, histogram]) => ({
        labels: [repo, branch, state],
        histogram,
      })),
    ),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'state_seconds', 'total'),
    help: (settings) =>
      'Seconds the merge queue spent in each state while the exporter watched it: each interval between ' +
      'two successful polls counts for the state seen at its start; longer gaps than ' +
      `polling.staleAfterSeconds (at least two intervals) count for nothing. ${seen(settings)}. ${CAPPED}.`,
    type: 'counter',
    labelNames: ['repo', 'branch', 'state'],
    scope: 'target',
    samples: ofQueueFlow((flow, repo, branch) =>
      samplesByKey([repo, branch], flow.counts.queueStateSeconds),
    ),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'last_merge_timestamp', 'seconds'),
    help: () =>
      'Unix time of the latest merge from the merge queue the exporter knows of: the final state ' +
      'change of a pull request a poll saw leave merged, a pull_request.merged webhook, or (API v2) ' +
      `a merged entry of the queue's concluded entries. Through API v2 read when the exporter starts ` +
      `watching the queue (the latest merge of the last ${LAST_MERGE_LOOKBACK_DAYS} days); through API v1 absent until the first merge ` +
      'after that is seen. Never goes back; kept while the queue is configured, stale or not',
    type: 'gauge',
    labelNames: ['repo', 'branch'],
    scope: 'target',
    samples: ofQueueFlow(({ lastMergeAt }, repo, branch) =>
      lastMergeAt === undefined ? [] : [{ labels: [repo, branch], value: lastMergeAt }],
    ),
  },
  {
    name: EXITS_BY_SOURCE,
    help: (settings) =>
      'Pull requests that left the merge queue, by which witness counted the exit: event (its ' +
      'pull_request.merged, failed or canceled webhook) or poll (a poll saw it gone, or a read of ' +
      `concluded entries listed it, and no event came within ${formatInterval(2 * settings.mergeQueueIntervalSeconds)}, ` +
      'or webhooks were off then). Each exit counts once. Only with webhooks enabled; starts at 0 ' +
      'when the exporter starts',
    type: 'counter',
    labelNames: ['repo', 'branch', 'source'],
    scope: 'target',
    samples: ofQueueFlow((flow, repo, branch) =>
      samplesByKey([repo, branch], flow.exitStays?.bySource ?? []),
    ),
  },
];

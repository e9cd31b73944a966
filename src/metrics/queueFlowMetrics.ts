// Merge-queue flow: counters and histograms derived from what changed between consecutive
// successful polls (src/flow/), rendered from each queue's ledger in the snapshot store.
import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';
import type { QueueFlow } from '../snapshot/queueFlowTypes.js';
import { ENDPOINTS } from '../trunk/schemas.js';
import { formatInterval } from './help.js';
import { NAMESPACE, fqName } from './naming.js';
import type { StatusSource } from './snapshotView.js';
import { StoredHistogram, type StoredHistogramSeries } from './storedHistogram.js';

const SUBSYSTEM = 'merge_queue';

const EXITED = fqName(NAMESPACE, SUBSYSTEM, 'pull_requests_exited', 'total');
const TRANSITIONS = fqName(NAMESPACE, SUBSYSTEM, 'state_transitions', 'total');
const TIME_IN_QUEUE = fqName(NAMESPACE, SUBSYSTEM, 'time_in_queue', 'seconds');
const TIME_IN_STATE = fqName(NAMESPACE, SUBSYSTEM, 'time_in_state', 'seconds');
const STATE_SECONDS = fqName(NAMESPACE, SUBSYSTEM, 'state_seconds', 'total');

interface QueueFlowMetricsOptions {
  readonly registry: Registry;
  /** The statuses of the targets whose series to render. */
  readonly source: StatusSource;
  readonly intervalSeconds: number;
}

interface LabelledFlow {
  readonly repo: string;
  readonly branch: string;
  readonly flow: QueueFlow;
}

/** Every configured queue with a ledger, stale or not: counters only count what was seen. */
function queueFlows(source: StatusSource): LabelledFlow[] {
  const flows: LabelledFlow[] = [];
  for (const { target, queueFlow } of source.statuses()) {
    if (queueFlow !== undefined)
      flows.push({ repo: target.repo, branch: target.branch, flow: queueFlow });
  }
  return flows;
}

/** Registers the flow counters and histograms; each reads the store's ledgers on scrape. */
export function registerQueueFlowMetrics(options: QueueFlowMetricsOptions): void {
  const { registry, source } = options;
  const every = formatInterval(options.intervalSeconds);
  const seen =
    `Derived from consecutive successful polls of ${ENDPOINTS.getQueue} (every ${every}); ` +
    'starts at 0 when the exporter starts';
  const missed = 'A pull request that enters and leaves between two polls is never seen.';
  const capped =
    'At most 20 undocumented state values per queue are kept as labels; later ones count as other';

  new Counter({
    name: EXITED,
    help:
      `Pull requests that left the merge queue, by final state from one ${ENDPOINTS.getSubmittedPullRequest} ` +
      `lookup (unknown when it cannot tell). ${seen}. ${missed}`,
    labelNames: ['repo', 'branch', 'outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { repo, branch, flow } of queueFlows(source)) {
        for (const [outcome, count] of flow.counts.exited)
          this.inc({ repo, branch, outcome }, count);
      }
    },
  });

  new Counter({
    name: TRANSITIONS,
    help:
      `Pull request state changes seen between two polls (testing to pending is a restart); ` +
      `several changes between two polls count as one from the first state to the last. ${seen}. ${missed} ` +
      `${capped}.`,
    labelNames: ['repo', 'branch', 'from', 'to'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { repo, branch, flow } of queueFlows(source)) {
        for (const { from, to, count } of flow.counts.transitions.values()) {
          this.inc({ repo, branch, from, to }, count);
        }
      }
    },
  });

  new StoredHistogram({
    name: TIME_IN_QUEUE,
    help:
      'Time pull requests spent in the merge queue, observed when they leave, in seconds: from their ' +
      'first state change (or the poll that first saw them) to their final state change (or the poll ' +
      `that saw them gone). For PRs queued before the exporter started, a lower bound. ${seen}. ${missed}`,
    labelNames: ['repo', 'branch', 'outcome'] as const,
    registers: [registry],
    read: () =>
      seriesOf(source, (flow) =>
        [...flow.counts.timeInQueue].map(([outcome, histogram]) => [{ outcome }, histogram]),
      ),
  });

  new StoredHistogram({
    name: TIME_IN_STATE,
    help:
      'Time pull requests spent in a state, observed when a poll sees them leave it, in seconds, ' +
      `from stateChangedAt to stateChangedAt where the API gives them. ${seen}. ${missed} ${capped}.`,
    labelNames: ['repo', 'branch', 'state'] as const,
    registers: [registry],
    read: () =>
      seriesOf(source, (flow) =>
        [...flow.counts.timeInState].map(([state, histogram]) => [{ state }, histogram]),
      ),
  });

  new Counter({
    name: STATE_SECONDS,
    help:
      'Seconds the merge queue spent in each state while the exporter watched it: each interval between ' +
      'two successful polls counts for the state seen at its start; longer gaps than ' +
      `polling.staleAfterSeconds (at least two intervals) count for nothing. ${seen}. ${capped}.`,
    labelNames: ['repo', 'branch', 'state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const { repo, branch, flow } of queueFlows(source)) {
        for (const [state, seconds] of flow.counts.queueStateSeconds) {
          this.inc({ repo, branch, state }, seconds);
        }
      }
    },
  });
}

function seriesOf<L extends 'outcome' | 'state'>(
  source: StatusSource,
  perQueue: (flow: QueueFlow) => [Record<L, string>, StoredHistogramSeries<string>['histogram']][],
): StoredHistogramSeries<'repo' | 'branch' | L>[] {
  return queueFlows(source).flatMap(({ repo, branch, flow }) =>
    perQueue(flow).map(([labels, histogram]) => ({
      labels: { repo, branch, ...labels },
      histogram,
    })),
  );
}

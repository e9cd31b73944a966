// The flow ledger of one merge queue, poll by poll: started by the first successful poll (which can
// only establish what is there, so it counts nothing), advanced by each later one.
import type { MergeQueueSnapshot } from '../snapshot/types.js';
import { applyFlowEvents, emptyFlowCounts } from './ledger.js';
import { diffQueuePoll, seenOnFirstPoll, type QueueDiffOptions } from './queueDiff.js';
import type { ExitLookup, QueueFlow, TrackedPullRequest } from '../snapshot/queueFlowTypes.js';

/** The ledger after the first successful poll since the exporter started: zero counts, every PR tracked. */
export function startQueueFlow(first: MergeQueueSnapshot): QueueFlow {
  return {
    counts: emptyFlowCounts(),
    lastPollAt: first.takenAt,
    lastQueueState: first.state,
    tracked: firstEntries(first),
    departed: new Map(),
  };
}

/** The ledger after one more successful poll, given the lookups of the PRs that departed. */
export function advanceQueueFlow(
  flow: QueueFlow,
  current: MergeQueueSnapshot,
  lookups: ReadonlyMap<number, ExitLookup>,
  options: QueueDiffOptions,
): QueueFlow {
  const diff = diffQueuePoll(flow, current, lookups, options);
  return {
    counts: applyFlowEvents(flow.counts, diff.events),
    lastPollAt: current.takenAt,
    lastQueueState: current.state,
    tracked: diff.tracked,
    departed: diff.departed,
  };
}

/** Every PR tracked from its first entry, as diffQueuePoll keeps it (a repeated number counts once). */
function firstEntries(first: MergeQueueSnapshot): Map<number, TrackedPullRequest> {
  const tracked = new Map<number, TrackedPullRequest>();
  for (const pr of first.pullRequests) {
    if (!tracked.has(pr.number)) tracked.set(pr.number, seenOnFirstPoll(pr, first.takenAt));
  }
  return tracked;
}

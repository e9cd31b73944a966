// Why pull requests leave and restart in a merge queue, from the queue-entry histories of the pull
// requests the polls saw change or leave (API v2), rendered from each queue's flow ledger. Absent for
// a queue read through API v1, with `reads.queueEntryHistory` off, and while the history reads have
// failed for longer than `polling.staleAfterSeconds` (the queue's other families stay).
import {
  MAX_REASONS_PER_FAMILY,
  OTHER_REASON,
  UNKNOWN_REASON,
  type EntryHistory,
} from '../snapshot/entryHistoryTypes.js';
import type { TargetStatus } from '../snapshot/types.js';
import { V2_ENDPOINTS } from '../trunk/v2Schemas.js';
import type { FamilySettings, PerTargetFamily, Sample } from './family.js';
import { formatInterval } from './help.js';
import { NAMESPACE, fqName } from './naming.js';

const SUBSYSTEM = 'merge_queue';

/** Where the history families come from, and how late they can be. */
export function fromEntryHistory(settings: FamilySettings): string {
  return (
    `API v2 only, with reads.queueEntryHistory on: from GET /${V2_ENDPOINTS.listQueueEntryHistory} of ` +
    'the pull requests a poll saw change state or leave, read for the whole organization at most ' +
    `every ${formatInterval(settings.mergeQueueIntervalSeconds)} and taken by the queue's next poll; ` +
    'each transition counts once, and only those after the exporter started'
  );
}

/** How reasons become label values. */
export const REASON_LABELS =
  `Reasons as Trunk spells them (${UNKNOWN_REASON} when it gives none); at most ` +
  `${MAX_REASONS_PER_FAMILY} per queue, later new ones count as ${OTHER_REASON}`;

/** A queue's counts by reason from its histories while they are shown; none otherwise. */
export function shownEntryHistory({ queueFlow }: TargetStatus): EntryHistory | undefined {
  const history = queueFlow?.entryHistory;
  return history?.shown === true ? history : undefined;
}

/** The samples of one of a queue's reason counts, given its repo and branch. */
function byReason(
  counts: (history: EntryHistory) => ReadonlyMap<string, number>,
): (status: TargetStatus) => Iterable<Sample> {
  return (status) => {
    const history = shownEntryHistory(status);
    if (history === undefined) return [];
    const { repo, branch } = status.target;
    return Array.from(counts(history), ([reason, value]) => ({
      labels: [repo, branch, reason],
      value,
    }));
  };
}

/** The history families, in page order: one per queue read through API v2 with the read on. */
export const ENTRY_HISTORY_FAMILIES: readonly PerTargetFamily[] = [
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'pull_requests_cancelled', 'total'),
    help: (settings) =>
      'Pull requests removed from the merge queue (their entry became cancelled), by the reason of ' +
      `that transition (PR_CLOSED, NOT_READY_TIMEOUT_EXPIRED, USER_REQUESTED, …). ${REASON_LABELS}. ` +
      `${fromEntryHistory(settings)}.`,
    type: 'counter',
    labelNames: ['repo', 'branch', 'reason'],
    scope: 'target',
    samples: byReason((history) => history.cancelled),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'restarts', 'total'),
    help: (settings) =>
      'Merge-queue entries sent back to pending from testing, testsPassed or pendingFailure, by the ' +
      'reason of that transition (MANUAL_PUSH_TO_TARGET_BRANCH, PREREQUISITE_MERGE_ITEM_FAILED, ' +
      `SKIP_THE_LINE_INTERRUPTED, BISECTION_REQUIRED, …). ${REASON_LABELS}. ${fromEntryHistory(settings)}.`,
    type: 'counter',
    labelNames: ['repo', 'branch', 'cause'],
    scope: 'target',
    samples: byReason((history) => history.restarts),
  },
];

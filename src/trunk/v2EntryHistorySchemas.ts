import { z } from 'zod';
import { LabelTextCuts } from './labelText.js';
import type { AnomalyReport } from './responseAnomalies.js';
import { exportableSeconds } from './timestamps.js';
import { UNUSABLE_ITEM, optionalValue, tolerantList } from './tolerantSchemas.js';
import { v2PageSchema, type V2Page, type V2PageResponse } from './v2Schemas.js';

// `GET /v2/queue-entry-history?pullRequestIds=…` (`BatchQueueEntryHistoryList`): "up to 50 pull
// requests' complete queue-entry timelines in one response", each group "oldest first by default".
// Only what the reason, restart and transition counts read is required of a transition.

/** At most this many pull request ids per call ("Comma-separated pull request ids, at most 50"). */
export const V2_ENTRY_HISTORY_MAX_IDS = 50;

/**
 * "`GET /v2/pull-requests…` (single-PR reads, history, estimate): 5 per second per key": each call,
 * every page of one included, starts at least this long after the one before was answered.
 */
export const V2_ENTRY_HISTORY_CALL_SPACING_MS = 200;

/**
 * One state change of a queue entry (`QueueEntryStateTransition`): its state, when it was entered,
 * and why. `reason` is "an open set" and "`null` for `testing` and `pendingFailure`"; a value that is
 * no string reads as absent (counted as `unknown`).
 */
export const v2EntryTransitionSchema = z.object({
  // "Constant on a single pull request's history": a row naming another is not this timeline's.
  pullRequestId: optionalValue(z.string()),
  state: z.string(),
  changedAt: z.string(),
  reason: optionalValue(z.string()),
});

/** One pull request's timeline (`PullRequestQueueEntryHistory`), unusable transitions in place. */
export const v2EntryHistoryGroupSchema = z.object({
  pullRequestId: z.string().min(1),
  transitions: tolerantList(v2EntryTransitionSchema),
});
export const v2EntryHistoryPageSchema = v2PageSchema(v2EntryHistoryGroupSchema);

/** One transition as the exporter keeps it. */
export interface EntryTransition {
  /** The queue-entry state entered, in v2's spelling (`pendingFailure`). */
  readonly state: string;
  /** Unix seconds of changedAt ("When the entry entered this state"). */
  readonly at: number;
  /** Why, as Trunk spells it; undefined for null or absent. */
  readonly reason: string | undefined;
}

/** One pull request's timeline as the exporter keeps it: usable transitions, oldest first. */
export interface V2EntryHistory {
  /** Lowercase, as Trunk normalizes them ("Ids are normalized to lowercase in the response"). */
  readonly pullRequestId: string;
  readonly transitions: readonly EntryTransition[];
}

type GroupResponse = z.infer<typeof v2EntryHistoryGroupSchema>;

/**
 * Checks a page of timelines: drops and reports unusable groups and unusable transitions (the rest
 * of a timeline still counts; a transition of another pull request is unusable in this one) and each changedAt that is no RFC 3339 date-time in 2000-2100 (its
 * transition cannot be placed), cuts and reports each reason too long for a label value, and puts
 * each timeline oldest first whatever order it came in, each transition once (one listed again is
 * reported as `invalid_item`).
 */
export function checkEntryHistoryPage(
  response: V2PageResponse<GroupResponse>,
  report: AnomalyReport,
): V2Page<V2EntryHistory> {
  const groups = response.data.filter((group) => group !== UNUSABLE_ITEM);
  if (groups.length < response.data.length) {
    report('invalid_item', response.data.length - groups.length);
  }
  let unusable = 0;
  let untimed = 0;
  const cuts = new LabelTextCuts();
  let repeated = 0;
  const data = groups.map((group): V2EntryHistory => {
    const pullRequestId = group.pullRequestId.toLowerCase();
    const transitions: EntryTransition[] = [];
    for (const transition of group.transitions) {
      if (
        transition === UNUSABLE_ITEM ||
        (transition.pullRequestId !== undefined &&
          transition.pullRequestId.toLowerCase() !== pullRequestId)
      ) {
        unusable += 1;
        continue;
      }
      const at = exportableSeconds(transition.changedAt);
      if (at === undefined) untimed += 1;
      else {
        const { reason } = transition;
        // An empty reason gives none, as null does (`unknown`).
        transitions.push({
          state: transition.state,
          at,
          reason: reason === undefined || reason === '' ? undefined : cuts.cut(reason),
        });
      }
    }
    const ordered = inTimelineOrder(transitions);
    repeated += transitions.length - ordered.length;
    return { pullRequestId, transitions: ordered };
  });
  if (unusable + repeated > 0) report('invalid_item', unusable + repeated);
  if (untimed + cuts.count > 0) report('invalid_field', untimed + cuts.count);
  return { ...response, data };
}

/**
 * A timeline's transitions oldest first, each once: a transition listed again (the same state,
 * instant and reason) is the same transition, and would otherwise count twice. Stable: two
 * transitions of one instant keep the order Trunk gave them.
 */
export function inTimelineOrder(transitions: readonly EntryTransition[]): EntryTransition[] {
  const seen = new Set<string>();
  return [...transitions]
    .sort((a, b) => a.at - b.at)
    .filter(({ state, at, reason }) => {
      const key = JSON.stringify([state, at, reason ?? null]);
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
}

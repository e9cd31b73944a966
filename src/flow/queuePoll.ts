// One poll of a merge queue as its ledger takes it: the reads are made first (poller/v1/, v2/),
// and their answers come here in one call. Pure: what to ask the exit reads for is a plan from the
// ledger and the live list (exitReadPlan), and the fold is a function of the answers.
import type {
  ConcludedExit,
  ConcludedReads,
  ExitLookup,
  QueueFlow,
  Resubmission,
} from '../snapshot/queueFlowTypes.js';
import type { MergeQueueSnapshot } from '../snapshot/types.js';
import type { ExporterConfig } from '../config/types.js';
import { withMerges } from './lastMerge.js';
import {
  advanceQueueFlow,
  countConcludedExits,
  exitsToLookUp,
  startQueueFlow,
  type QueueFlowOptions,
  type QueueFlowUpdate,
} from './queueFlow.js';

/** Which departed PRs an exit read asks about, and since when they can have concluded. */
export interface ExitReadPlan {
  /** The departed PRs no event has told about. */
  readonly prNumbers: readonly number[];
  /**
   * The earliest time the departed PRs were last seen changing state: each concluded after it.
   * From their stateChangedAt (Trunk's clock) where the polls had one, so the window of concluded
   * entries does not depend on the exporter's clock agreeing with Trunk's.
   */
  readonly since: number;
}

/** The exit read's plan for the poll that read `current`, given the ledger before it. */
export function exitReadPlan(flow: QueueFlow, current: MergeQueueSnapshot): ExitReadPlan {
  const prNumbers = exitsToLookUp(flow, current);
  let since = flow.lastPollAt;
  for (const number of prNumbers) {
    const seen = flow.tracked.get(number) ?? flow.departed.get(number);
    if (seen !== undefined && seen.stateSince < since) since = seen.stateSince;
  }
  return { prNumbers, since };
}

/** What the exit reads of one poll learned. */
export interface ExitAnswers {
  /** The final state of each departed PR asked about, or `retry`/`not_concluded`. */
  readonly lookups: ReadonlyMap<number, ExitLookup>;
  /** API v2: exits no poll saw leave, each for the first time. */
  readonly concluded?: readonly ConcludedExit[];
  /** API v2: listed PRs whose entry concluded and was submitted again since the previous poll. */
  readonly resubmissions?: ReadonlyMap<number, Resubmission>;
  /** API v2: where the reads of concluded entries have got to after this poll. */
  readonly reads?: ConcludedReads;
}

/** Everything one poll of a merge queue read, for its ledger. */
export interface QueuePollAnswers {
  readonly current: MergeQueueSnapshot;
  /** The queue had no ledger before this poll: it starts one, counting nothing. */
  readonly starts: boolean;
  readonly exits: ExitAnswers;
  /** API v2, when the ledger starts: the latest merge before the exporter watched the queue. */
  readonly lastMergeAt?: number | undefined;
}

/**
 * How the queue's ledger takes one poll: it starts (with the last merge before it), or the PRs
 * that left since the previous poll are counted as the exit reads tell, then the diff. Applied to
 * the ledger as it is when the poll is recorded, not as it was before the reads: a webhook event
 * may have changed it meanwhile.
 */
export function queuePollUpdate(
  answers: QueuePollAnswers,
  options: QueueFlowOptions,
): QueueFlowUpdate {
  const { current, exits } = answers;
  const start = (): QueueFlow =>
    exits.reads === undefined
      ? startQueueFlow(current)
      : { ...startQueueFlow(current), concludedReads: exits.reads };
  return (latest) => {
    if (answers.starts) return withMerges(start(), [answers.lastMergeAt]);
    if (latest === undefined) return start();
    const advanced = advanceQueueFlow(latest, current, exits.lookups, options, exits.resubmissions);
    if (exits.reads === undefined) return advanced;
    return {
      ...countConcludedExits(advanced, exits.concluded ?? [], current.takenAt, options),
      concludedReads: exits.reads,
    };
  };
}

/** How a queue polled every `intervalSeconds` under `config` steps its ledger. */
export function queueFlowOptions(
  config: ExporterConfig,
  intervalSeconds: number,
): QueueFlowOptions {
  const { staleAfterSeconds } = config.polling;
  return {
    maxGapSeconds: Math.max(staleAfterSeconds, 2 * intervalSeconds),
    lookupRetrySeconds: staleAfterSeconds,
    intervalSeconds,
    webhooks: config.webhooks.enabled,
  };
}

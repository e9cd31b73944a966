// With webhooks on, a pull request's exit from a merge queue has two witnesses: its
// pull_request.merged|failed|canceled event, and the poll that sees it gone. Each exit is counted
// once, by whichever is first to be sure: the event at once; the poll only after the event had
// 2 × mergeQueueIntervalSeconds to arrive. What the ledger keeps to tell the two apart is here.
import type { ExitOutcome } from './exitOutcome.js';

/** Which witness counted an exit, as the `source` label. */
export const EXIT_SOURCES = ['event', 'poll'] as const;
export type ExitSource = (typeof EXIT_SOURCES)[number];

/**
 * Remembered exits, poll-seen exits held for their event, and event entry times per queue: at most
 * this many each. Past it the oldest goes (a held exit is counted from the poll at once): a queue
 * sees far fewer exits within the windows they are kept for.
 */
export const MAX_REMEMBERED_EXITS = 2000;

/**
 * How long a counted exit is remembered once the polls are done with it, so that a late event (a
 * redelivery, a backlog) is not counted again. Longer than Svix's first retries.
 */
export const COUNTED_EXIT_RETENTION_SECONDS = 6 * 3600;

/** An exit already counted, remembered so the other witness does not count it a second time. */
export interface CountedExit {
  readonly source: ExitSource;
  readonly outcome: ExitOutcome;
  /** When the PR left (unix seconds): the event's timestamp, else the poll's best estimate. */
  readonly leftAt: number;
  /** When the exporter counted it, on its own clock (ageing out, the race with an in-flight poll). */
  readonly countedAt: number;
  /**
   * A time by which the polls know the PR was out of the queue: the poll that saw it gone, or one
   * that started after the event. Undefined while a poll may still list it (or see it leave).
   */
  readonly goneBy: number | undefined;
  /**
   * When a later stay of the same PR began (its submitted or queued event, or a poll listing it
   * again): an exit after this is that stay's, not this one's.
   */
  readonly restartedAt: number | undefined;
}

/** An exit a poll saw, held for its event until dueAt and then counted from the poll. */
export interface PendingExit {
  readonly outcome: ExitOutcome;
  /** Best estimate of when this stay began (unix seconds). */
  readonly enteredAt: number;
  /** Best estimate of when it left. */
  readonly leftAt: number;
  /** takenAt of the poll that saw it gone. */
  readonly goneAt: number;
  /** When it is counted from the poll if no event has come: goneAt + 2 × the interval. */
  readonly dueAt: number;
}

/** The webhook half of a queue's ledger; absent while webhooks are off. */
export interface WebhookExits {
  /** By PR number: the last exit of each PR counted lately. */
  readonly counted: ReadonlyMap<number, CountedExit>;
  /** By PR number: exits a poll saw that no event has confirmed yet. */
  readonly pending: ReadonlyMap<number, PendingExit>;
  /** By PR number: when its current stay began, per its submitted (or first queued) event. */
  readonly enteredAt: ReadonlyMap<number, number>;
  /** Exits counted per witness since the exporter started watching the queue. */
  readonly bySource: ReadonlyMap<ExitSource, number>;
}

/** What a merge-queue webhook event says about one pull request's stay, as the ledger needs it. */
export type PullRequestQueueEvent =
  | {
      /**
       * `pull_request.submitted` begins a stay; `pull_request.queued` comes at its start and again
       * whenever the PR is queued anew (after a restart), so it only says the stay has begun.
       */
      readonly kind: 'submitted' | 'queued';
      readonly prNumber: number;
      /** The event's timestamp (unix seconds), when it has one. */
      readonly at: number | undefined;
    }
  | {
      /** `pull_request.merged`, `.failed` or `.canceled`: the stay is over. */
      readonly kind: 'exit';
      readonly prNumber: number;
      readonly outcome: Exclude<ExitOutcome, 'unknown'>;
      readonly at: number | undefined;
    };

/** The timing a queue's webhook ledger needs from the configuration. */
export interface WebhookExitSettings {
  /** mergeQueueIntervalSeconds: a poll takes at most this long, so one that finished later than this after an event read the queue after it. */
  readonly intervalSeconds: number;
}

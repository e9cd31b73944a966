// A pull request's exit from a merge queue has up to three witnesses: its
// pull_request.merged|failed|canceled event (webhooks on), the poll that sees it gone, and through
// API v2 a read of concluded entries. What a queue keeps of each PR's stay to count every exit once
// (flow/prStay.ts moves a stay from phase to phase).
import type { ExitOutcome } from './exitOutcome.js';

/** Which witness counted an exit, as the `source` label. */
export const EXIT_SOURCES = ['event', 'poll'] as const;
export type ExitSource = (typeof EXIT_SOURCES)[number];

/**
 * PRs whose stay a queue remembers at most; past it the least recently changed goes (a held exit
 * is counted from its poll first): a queue sees far fewer exits within the windows they are kept for.
 */
export const MAX_REMEMBERED_EXITS = 2000;

/**
 * How long a counted exit is remembered once the polls are done with it, so that a late event (a
 * redelivery, a backlog) is not counted again. Longer than Svix's first retries.
 */
export const COUNTED_EXIT_RETENTION_SECONDS = 6 * 3600;

/** An exit already counted, remembered so the other witness does not count it a second time. */
export interface CountedExit {
  readonly witness: ExitSource;
  readonly outcome: ExitOutcome;
  /** When the PR left (unix seconds): the event's timestamp, else the poll's best estimate. */
  readonly leftAt: number;
  /** When the exporter counted it, on its own clock (ageing out, the race with an in-flight poll). */
  readonly countedAt: number;
  /**
   * A time by which the polls know the PR was out of the queue: the poll that saw it gone, or one
   * that started after the event. Undefined while a poll may still list it (or see it leave); once
   * set, the stay is closed and only a late event can still meet it.
   */
  readonly goneBy: number | undefined;
  /**
   * When a later stay of the same PR began (its submitted or queued event, or a poll listing it
   * again): an exit after this is that stay's, not this one's.
   */
  readonly restartedAt: number | undefined;
}

/** The exit a poll saw, held for its event until dueAt and then counted from the poll. */
export interface HeldExit {
  readonly outcome: ExitOutcome;
  /** Best estimate of when this stay began (unix seconds). */
  readonly enteredAt: number;
  /** Best estimate of when it left. */
  readonly leftAt: number;
  /** takenAt of the poll that saw it gone. */
  readonly goneAt: number;
  /** When it is counted from the poll if no event has come: goneAt + 2 × the interval. */
  readonly dueAt: number;
  /**
   * When a later stay began while it was held (the PR's submitted or queued event after it left):
   * an exit event after this is that stay's.
   */
  readonly restartedAt?: number | undefined;
}

/**
 * One PR's stay as the witnesses know it. `entered`: its submitted (or first queued) event said
 * when it began. `held`: a poll saw it gone and waits for its event. `counted`: a witness counted
 * its exit. An entered or held stay keeps the PR's previous counted exit, whose late event must
 * still count nothing.
 */
export type PrStay =
  | {
      readonly phase: 'entered';
      readonly enteredAt: number;
      readonly previous: CountedExit | undefined;
    }
  | { readonly phase: 'held'; readonly held: HeldExit; readonly previous: CountedExit | undefined }
  | { readonly phase: 'counted'; readonly exit: CountedExit };

/**
 * A counted stay as a queue keeps it (flow/storedStays.ts): its exit's witness and outcome in one
 * code, then leftAt, countedAt, goneBy and restartedAt (NaN for undefined), all doubles in one
 * array. A queue keeps each counted exit for hours, so each costs one array rather than two
 * objects and their boxed numbers.
 */
export type PackedCountedStay = readonly number[];

/** A stay as a queue keeps it: counted ones packed, the rest as they are. */
export type StoredStay = PrStay | PackedCountedStay;

/** The exit-counting half of a queue's flow. */
export interface ExitStays {
  /** By PR number, least recently changed first. */
  readonly stays: ReadonlyMap<number, StoredStay>;
  /** Exits counted per witness since the exporter started watching the queue. */
  readonly bySource: ReadonlyMap<ExitSource, number>;
}

/** What a merge-queue webhook event says about one pull request's stay. */
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

/** The timing exit counting needs from the configuration. */
export interface WebhookExitSettings {
  /** mergeQueueIntervalSeconds: a poll takes at most this long, so one that finished later than this after an event read the queue after it. */
  readonly intervalSeconds: number;
}

/** What a queue's stays are stepped with: the timing, and how far back its reads reach. */
export interface StayContext extends WebhookExitSettings {
  /**
   * API v2: the countFrom of the queue's reads of concluded entries (undefined on API v1, or before
   * the first). A counted exit is kept until the reads have moved past it, however long that takes,
   * so that no read counts it again once the events' memory of it would be gone.
   */
  readonly readFrom: number | undefined;
}

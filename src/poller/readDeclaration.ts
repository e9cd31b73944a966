// A read of the Trunk API, declared as data: what it calls, for what, how often, how much at most,
// what the budget expects of it, which part of a target's snapshot it fills and what its failure
// does. The poll jobs, the API budget and the docs' cost table read these declarations; a source
// (v1/, v2/) lists the reads it makes and runs each through PollReads.
import type { ApiVersion } from '../config/targetApis.js';
import type { ExporterConfig } from '../config/types.js';
import type { SnapshotPart } from '../snapshot/types.js';
import type { Endpoint } from '../trunk/schemas.js';
import type { BudgetAssumption, OrganizationSize } from './readCost.js';

/** What a read covers: one merge queue, one repository's tests, or the whole organization. */
export type ReadScope = 'queue' | 'repository' | 'organization';

/** Which poll interval of the config an organization-wide read follows. */
export type PollInterval = 'mergeQueue' | 'flakyTests';

/** How often a read is made. */
export type ReadCadence =
  /** On every poll of its target. */
  | { readonly kind: 'every poll' }
  /** On the polls of its target that need it (`when`); its cost is per poll, the share included. */
  | { readonly kind: 'some polls'; readonly when: string }
  /**
   * Organization-wide and shared (SharedRead): at most once per `interval` however many polls
   * ask, and more often when webhook events ask for it again (`refreshedByEvents`).
   */
  | {
      readonly kind: 'shared';
      readonly interval: PollInterval;
      readonly refreshedByEvents: boolean;
    }
  /** Outside the steady state: once on `event`, which the budget leaves out. */
  | { readonly kind: 'on an event'; readonly event: string };

/** What a failure of a read does (after the client's retries). */
export type ReadFailure =
  /** The poll fails: the target is down, and its parts keep their last values until staleAfterSeconds. */
  | { readonly effect: 'poll fails' }
  /**
   * The target is down with the failure as its last error; only the read's part keeps its last
   * values until staleAfterSeconds, the others are as read. A poll none of whose parts could be
   * read fails.
   */
  | { readonly effect: 'part down' }
  /**
   * The target stays up (its gauges were read); the read's part keeps its last values, which the
   * next good read brings up to date, until staleAfterSeconds after its last complete read.
   */
  | { readonly effect: 'part late' }
  /** The read takes its failure itself, as `then` says; nothing is hidden. */
  | { readonly effect: 'taken by the read'; readonly then: string };

/** What the budget's estimate of one run of a read depends on. */
export interface CostInputs {
  readonly config: ExporterConfig;
  /** The organization the organization-wide reads are sized for. */
  readonly organization: OrganizationSize;
  /** Seconds between two runs of the read (its target's poll interval, or the shared read's). */
  readonly periodSeconds: number;
  /**
   * This instance's targets whose polls make the read: 1 for a read of one target; for a shared
   * read, those that ask for it (a shard's own queues, where the organization has more).
   */
  readonly askedBy: number;
}

/** The calls one run of a read makes in the budget's estimate. */
export interface ReadCost {
  /**
   * Calls per endpoint of one run: of one poll of its target (the share of polls that make it
   * included, for a read made on some polls), or of one shared read.
   */
  readonly calls: (inputs: CostInputs) => Readonly<Partial<Record<Endpoint, number>>>;
  /** The assumptions (BUDGET_ASSUMPTIONS) it takes, for the log line and the docs' table. */
  readonly assumes: readonly BudgetAssumption[];
}

/** One read of the Trunk API, as data. */
export interface ReadDeclaration {
  /** What it reads, as the log lines and the docs name it: `flaky and broken tests`. */
  readonly name: string;
  readonly api: ApiVersion;
  /** Every endpoint it may call; the estimate counts the ones its cost names. */
  readonly endpoints: readonly Endpoint[];
  readonly scope: ReadScope;
  readonly cadence: ReadCadence;
  /** The most calls one run may make, as the code's bounds and the config's limits set it. */
  readonly maxCalls: string;
  /** The part of its target's snapshot it fills. */
  readonly part: SnapshotPart;
  readonly failure: ReadFailure;
  readonly cost: ReadCost;
}

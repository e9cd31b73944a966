// A merge queue's verification runs (API v2): what each read adds to their counts, each run counted
// once by id however the reads overlap, and when the next read is due and where it starts.
import { emptyHistogram, observe, type HistogramCounts } from '../snapshot/histogram.js';
import { NO_ENTRIES, orShared } from '../snapshot/noEntries.js';
import {
  TESTING_DURATION_BUCKETS_SECONDS,
  durationSeriesKey,
  withZeroSeries,
} from '../snapshot/testingAttemptTypes.js';
import { EMPTY_TOP_LABELS, type TopLabels } from '../snapshot/topLabelTypes.js';
import {
  BATCH_SIZE_BUCKETS,
  CHECK_LABEL_LIMITS,
  UNKNOWN_RUN_STATUS,
  type ConcludedRunSeries,
  type RunInProgress,
  type VerificationRunCounts,
  type VerificationRunReads,
  type VerificationRuns,
} from '../snapshot/verificationRunTypes.js';
import { READ_OVERLAP_SECONDS, exportableSeconds } from '../trunk/timestamps.js';
import {
  V2_RUN_IN_PROGRESS,
  V2_RUN_STATUSES,
  type V2VerificationRun,
} from '../trunk/v2VerificationRunSchemas.js';
import { countTopLabel } from './topLabels.js';

/**
 * How long a run may stay in progress and still hold reads back: with `testingTimeoutMinutes` 0
 * "a stuck run will hold its slot indefinitely", and every read would page through all the runs
 * created since. Past a day the list no longer reaches the run: it is followed by id instead
 * (runsFollowedById), still in the gauge, and counted when it concludes.
 */
export const RUN_READ_HORIZON_SECONDS = 86_400;

/**
 * Concluded runs one queue remembers as seen at most: a run held in progress for the day of the
 * horizon keeps every run created since in `seen`, a few thousand for a busy queue. Past it the
 * oldest go, and the next read starts after them, so none of them is listed and counted again (a
 * run in progress created before them is followed by id, as past the horizon).
 */
export const MAX_SEEN_RUNS = 5000;

/**
 * Runs in progress one queue follows by id at most (those the list no longer reaches): each costs
 * a call per read. Past it the oldest are no longer followed (not in the gauge, not counted).
 */
export const MAX_FOLLOWED_RUNS = 20;

/** What a read by id answered of a run followed: its row, or `gone` (404: Trunk has no such run). */
export type FollowedRunRead = V2VerificationRun | 'gone';

/** The concluded statuses the definition names; another counts as UNKNOWN_RUN_STATUS. */
const CONCLUDED_STATUSES = V2_RUN_STATUSES.filter((status) => status !== V2_RUN_IN_PROGRESS);
const KNOWN_CONCLUDED: ReadonlySet<string> = new Set(CONCLUDED_STATUSES);

/** Check conclusions that fail a run: "`failure`" and "`timeout`" (`CheckConclusion`). */
const FAILING_CONCLUSIONS: ReadonlySet<string> = new Set(['failure', 'timeout']);

/**
 * The runs of a queue whose ledger starts at `startAt` (the exporter's clock): none counted, the
 * first read from `createdAfter` (Trunk's clock).
 */
export function startVerificationRuns(
  startAt: number,
  createdAfter: number,
  batching: boolean,
): VerificationRuns {
  const counts = { concluded: NO_ENTRIES, batchSizes: NO_ENTRIES, checkFailures: EMPTY_TOP_LABELS };
  return {
    counts: withKnownRunSeries(counts, batching),
    reads: {
      countFrom: startAt,
      createdAfter: Math.max(createdAfter, startAt - RUN_READ_HORIZON_SECONDS),
      seen: NO_ENTRIES,
      inProgress: NO_ENTRIES,
      readAt: startAt,
      failed: false,
      hidden: false,
    },
  };
}

/** The counts with a runs series per concluded status present (withZeroSeries). */
export function withKnownRunSeries(
  counts: VerificationRunCounts,
  batching: boolean,
): VerificationRunCounts {
  const concluded = withZeroSeries(
    counts.concluded,
    CONCLUDED_STATUSES,
    batching,
    (status, bisection, durations) => ({ status, bisection, durations }),
  );
  return concluded === counts.concluded ? counts : { ...counts, concluded };
}

/** The runs after a read, and the ids of the runs in progress it stopped following. */
export interface RunsAfterRead {
  readonly runs: VerificationRuns;
  /** Runs in progress past MAX_FOLLOWED_RUNS, oldest first: no longer in the gauge nor counted. */
  readonly unfollowed: readonly string[];
}

/** What one read of verification runs counted. */
export interface CountedRuns extends RunsAfterRead {
  /** Runs created over the clock slack after the read (a future_timestamp anomaly). */
  readonly futureRuns: number;
}

/**
 * The runs in progress a read's list no longer reaches (created at or before its createdAfter:
 * past the horizon, or before runs forgotten past MAX_SEEN_RUNS), which it reads by id.
 */
export function runsFollowedById(reads: VerificationRunReads): string[] {
  const ids: string[] = [];
  for (const [id, run] of reads.inProgress) if (run.createdAt <= reads.createdAfter) ids.push(id);
  return ids;
}

/**
 * The runs after a read made at `readAt` (the exporter's clock) returned `rows`, newest first, and
 * the runs followed by id (runsFollowedById) answered `followed` (a run absent: its read failed,
 * it stays as it was): each concluded run no read counted is counted once, if it concluded after
 * the ledger started or was seen in progress; rows without usable timestamps (counted by the
 * client), or created at or before the read's createdAfter (not asked for), are left out. The next
 * read starts 120 s before the oldest run in progress the list showed, else the newest run seen,
 * but never after `latestPlausible` (the exporter's clock plus the slack) nor more than a day back,
 * and after the runs past MAX_SEEN_RUNS; a run in progress created at or before it is followed by
 * id from then on. A run created or updated after `latestPlausible` is a future run (concludedAt()
 * says how a concluded one counts).
 */
export function countVerificationRuns(
  runs: VerificationRuns,
  rows: readonly V2VerificationRun[],
  readAt: number,
  latestPlausible: number,
  followed: ReadonlyMap<string, FollowedRunRead> = NO_ENTRIES,
): CountedRuns {
  const { reads } = runs;
  const seen = new Map(reads.seen);
  // The runs followed by id that are still in progress, then those the list shows.
  const stillFollowed = new Map<string, RunInProgress>();
  const inProgress = new Map<string, RunInProgress>();
  let counts = runs.counts;
  let newest: number | undefined;
  let futureRuns = 0;
  for (const id of runsFollowedById(reads)) {
    const kept = reads.inProgress.get(id);
    const row = followed.get(id);
    if (kept === undefined || row === 'gone') continue;
    const createdAt = row === undefined ? undefined : exportableSeconds(row.createdAt);
    const updatedAt = row === undefined ? undefined : exportableSeconds(row.updatedAt);
    if (row === undefined || createdAt === undefined || updatedAt === undefined) {
      stillFollowed.set(id, kept);
      continue;
    }
    if (createdAt > latestPlausible || updatedAt > latestPlausible) futureRuns += 1;
    if (row.status === V2_RUN_IN_PROGRESS) {
      stillFollowed.set(id, {
        createdAt: kept.createdAt,
        bisection: row.isBisection,
        pullRequests: row.testedPullRequests.map((pr) => pr.number),
      });
    } else {
      // Seen in progress, and never listed again: counted here, once.
      counts = countRun(counts, row, createdAt, concludedAt(updatedAt, latestPlausible));
    }
  }
  for (const row of latestRows(rows)) {
    const createdAt = exportableSeconds(row.createdAt);
    const updatedAt = exportableSeconds(row.updatedAt);
    // A run created at or before createdAfter was not asked for: the reads before placed it.
    if (createdAt === undefined || updatedAt === undefined || createdAt <= reads.createdAfter) {
      continue;
    }
    newest = Math.max(newest ?? createdAt, Math.min(createdAt, latestPlausible));
    if (createdAt > latestPlausible || updatedAt > latestPlausible) futureRuns += 1;
    if (row.status === V2_RUN_IN_PROGRESS) {
      inProgress.set(row.id, {
        createdAt,
        bisection: row.isBisection,
        pullRequests: row.testedPullRequests.map((pr) => pr.number),
      });
      continue;
    }
    if (seen.has(row.id)) continue;
    seen.set(row.id, createdAt);
    if (updatedAt >= reads.countFrom || reads.inProgress.has(row.id)) {
      counts = countRun(counts, row, createdAt, concludedAt(updatedAt, latestPlausible));
    }
  }
  // A loop, not a spread: a hostile page can list more runs than a call's arguments may be.
  let oldestInProgress = Infinity;
  for (const run of inProgress.values())
    oldestInProgress = Math.min(oldestInProgress, run.createdAt);
  const anchor = inProgress.size > 0 ? oldestInProgress : newest;
  const createdAfter = Math.max(
    Math.min(
      Math.max(
        reads.createdAfter,
        anchor === undefined ? -Infinity : anchor - READ_OVERLAP_SECONDS,
        readAt - RUN_READ_HORIZON_SECONDS,
      ),
      latestPlausible,
    ),
    forgottenUpTo(seen),
  );
  // What is created at or before createdAfter is never listed again: a run in progress is read by
  // id from now on.
  for (const [id, createdAt] of seen) if (createdAt <= createdAfter) seen.delete(id);
  for (const [id, run] of stillFollowed) inProgress.set(id, run);
  const unfollowed = unfollowPastLimit(inProgress, createdAfter);
  return {
    runs: {
      counts,
      reads: {
        ...reads,
        createdAfter,
        seen: orShared(seen),
        inProgress: orShared(inProgress),
        readAt,
        failed: false,
        hidden: false,
      },
    },
    unfollowed,
    futureRuns,
  };
}

/**
 * Of the runs in `inProgress` created at or before `createdAfter` (followed by id), deletes all but
 * the newest MAX_FOLLOWED_RUNS; their ids, oldest first.
 */
function unfollowPastLimit(inProgress: Map<string, RunInProgress>, createdAfter: number): string[] {
  const past: [string, number][] = [];
  for (const [id, run] of inProgress)
    if (run.createdAt <= createdAfter) past.push([id, run.createdAt]);
  if (past.length <= MAX_FOLLOWED_RUNS) return [];
  const dropped = past
    .sort((a, b) => a[1] - b[1])
    .slice(0, past.length - MAX_FOLLOWED_RUNS)
    .map(([id]) => id);
  for (const id of dropped) inProgress.delete(id);
  return dropped;
}

/**
 * The runs after a read at `readAt` failed: read again at the next poll; the families are hidden
 * once the last good read is older than `staleAfterSeconds`.
 */
export function verificationRunReadFailed(
  runs: VerificationRuns,
  readAt: number,
  staleAfterSeconds: number,
): VerificationRuns {
  const hidden = readAt - runs.reads.readAt > staleAfterSeconds;
  return { ...runs, reads: { ...runs.reads, failed: true, hidden } };
}

/**
 * The runs after a read at `readAt` whose paging could not be trusted (more than V2_MAX_RUN_PAGES
 * pages since createdAfter, a cursor repeated): asked again from there it would fail the same way
 * at the same cost on every poll, so the next read starts at `from` instead. The runs created
 * before are not counted, save those seen in progress, which are followed by id from then on (up
 * to MAX_FOLLOWED_RUNS).
 */
export function verificationRunReadAbandoned(
  runs: VerificationRuns,
  readAt: number,
  staleAfterSeconds: number,
  from: number,
): RunsAfterRead {
  const failed = verificationRunReadFailed(runs, readAt, staleAfterSeconds);
  const createdAfter = Math.max(runs.reads.createdAfter, from);
  const seen = new Map([...runs.reads.seen].filter(([, createdAt]) => createdAt > createdAfter));
  const inProgress = new Map(runs.reads.inProgress);
  const unfollowed = unfollowPastLimit(inProgress, createdAfter);
  return {
    runs: {
      ...failed,
      reads: {
        ...failed.reads,
        createdAfter,
        seen: orShared(seen),
        inProgress: orShared(inProgress),
      },
    },
    unfollowed,
  };
}

/**
 * The createdAt of the newest run past MAX_SEEN_RUNS, newest first (-Infinity when they all fit):
 * the runs created then and before are forgotten, and a read after it lists none of them.
 */
function forgottenUpTo(seen: ReadonlyMap<string, number>): number {
  if (seen.size <= MAX_SEEN_RUNS) return -Infinity;
  return [...seen.values()].sort((a, b) => b - a)[MAX_SEEN_RUNS] ?? -Infinity;
}

/**
 * Each run once, oldest first (the list is newest first): a walk over a moving list may list it
 * twice, and a concluded row is the later. Oldest first, of two check names failing as often the
 * one that failed first keeps its label.
 */
function latestRows(rows: readonly V2VerificationRun[]): V2VerificationRun[] {
  const byId = new Map<string, V2VerificationRun>();
  for (const row of rows) {
    const kept = byId.get(row.id);
    if (kept === undefined || kept.status === V2_RUN_IN_PROGRESS) byId.set(row.id, row);
  }
  return [...byId.values()].reverse();
}

/** When a run concluded: where its duration ends (`end`), and on the exporter's clock (`at`). */
interface Conclusion {
  readonly end: number;
  readonly at: number;
}

/**
 * A run updated at `updatedAt` concluded then ("approximates when it concluded"), on Trunk's clock,
 * which may run ahead of the exporter's: its duration is Trunk's own difference unless the row is
 * dated past any skew (more than RUN_READ_HORIZON_SECONDS ahead: a bad row, which would put
 * decades into the duration sum), then it ends at `latestPlausible`. A check's last failure and
 * the exemplar are placed no later than `latestPlausible`: one dated in 2100 would keep its label
 * named for good, and crowd out the others'.
 */
function concludedAt(updatedAt: number, latestPlausible: number): Conclusion {
  return {
    end: updatedAt - latestPlausible > RUN_READ_HORIZON_SECONDS ? latestPlausible : updatedAt,
    at: Math.min(updatedAt, latestPlausible),
  };
}

/**
 * The counts with one more concluded run, created at `createdAt` and concluded as `conclusion`
 * says (Unix seconds): it took conclusion.end − createdAt, and its exemplar is its first
 * tested pull request with a usable number (none when it lists none).
 */
function countRun(
  counts: VerificationRunCounts,
  row: V2VerificationRun,
  createdAt: number,
  conclusion: Conclusion,
): VerificationRunCounts {
  const status = KNOWN_CONCLUDED.has(row.status) ? row.status : UNKNOWN_RUN_STATUS;
  const key = durationSeriesKey(status, row.isBisection);
  const series: ConcludedRunSeries = counts.concluded.get(key) ?? {
    status,
    bisection: row.isBisection,
    durations: emptyHistogram(TESTING_DURATION_BUCKETS_SECONDS),
  };
  const concluded = new Map(counts.concluded);
  const [first] = row.testedPullRequests;
  const by =
    first === undefined
      ? undefined
      : { pullRequest: first.number, timestampSeconds: conclusion.at };
  concluded.set(key, {
    ...series,
    durations: observe(series.durations, conclusion.end - createdAt, by),
  });
  const batchSizes = new Map(counts.batchSizes);
  const sizes: HistogramCounts =
    batchSizes.get(row.isBisection) ?? emptyHistogram(BATCH_SIZE_BUCKETS);
  // Each pull request once, however often the row lists it; one listed without a usable number is
  // still one of "the pull requests included in this run", though it cannot be told from the rest.
  const tested =
    new Set(row.testedPullRequests.map((pr) => pr.number)).size + row.unnumberedPullRequests;
  batchSizes.set(row.isBisection, observe(sizes, tested));
  return {
    concluded,
    batchSizes,
    checkFailures:
      row.status === 'failed'
        ? withCheckFailures(counts.checkFailures, row, conclusion.at)
        : counts.checkFailures,
  };
}

/**
 * The check failures with those of one failed run, concluded about `at` ("approximates when it
 * concluded"): each required check ("A check in `checks` is required iff its `name` is in this
 * list") that concluded `failure` or `timeout`, once per run however many checks of that name it
 * lists, under the names that failed runs most often.
 */
function withCheckFailures(failures: TopLabels, row: V2VerificationRun, at: number): TopLabels {
  const required = new Set(row.requiredStatuses);
  const failed = new Set(
    row.checks
      .filter(
        ({ name, conclusion }) =>
          required.has(name) && conclusion !== undefined && FAILING_CONCLUSIONS.has(conclusion),
      )
      .map(({ name }) => name),
  );
  let next = failures;
  for (const name of failed) next = countTopLabel(next, name, at, CHECK_LABEL_LIMITS);
  return next;
}

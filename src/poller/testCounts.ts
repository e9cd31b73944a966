// A repository's tests counted the same way whichever API lists them: per code owner, the earliest
// of their times, and per quarantine window and age.
import {
  NO_CODEOWNER,
  QUARANTINE_AGES,
  QUARANTINE_WINDOWS,
  type QuarantinedTests,
} from '../snapshot/types.js';

/**
 * Different owners a list's counts keep at most: far above any repository's teams, it bounds a
 * walk of a list naming a new owner on every row (a hostile or broken API) to a fixed size.
 */
export const MAX_CODEOWNERS_PER_LIST = 10_000;
/** Where an owner beyond the bound is counted: the metrics sum an owner of this name into `other`. */
const OTHER_OWNERS = 'other';

/**
 * Adds a test under each of its owners (once each), or under NO_CODEOWNER when it has none; an
 * owner first met once MAX_CODEOWNERS_PER_LIST are counted goes under `other`.
 */
export function countOwners(counts: Map<string, number>, codeowners: readonly string[]): void {
  const named = codeowners.filter((owner) => owner !== '');
  const owners = named.length > 0 ? new Set(named) : [NO_CODEOWNER];
  for (const owner of owners) {
    const counted =
      counts.has(owner) || counts.size < MAX_CODEOWNERS_PER_LIST ? owner : OTHER_OWNERS;
    counts.set(counted, (counts.get(counted) ?? 0) + 1);
  }
}

/** The smallest value (a loop: a spread of 100,000 arguments can overflow the stack). */
export function earliest(values: readonly number[]): number | undefined {
  let result: number | undefined;
  for (const value of values) if (result === undefined || value < result) result = value;
  return result;
}

/** How many of `values` meet `predicate`, without a filtered copy of 100,000 of them. */
export function countWhere(
  values: readonly number[],
  predicate: (value: number) => boolean,
): number {
  let count = 0;
  for (const value of values) if (predicate(value)) count += 1;
  return count;
}

/**
 * Tests per quarantine window and age, from each test's own quarantine time, so the counts are the
 * same after an exporter restart. A timestamp ahead of the exporter's clock counts as recent.
 */
export function quarantineAgeCounts(
  quarantineTimes: readonly number[],
  takenAt: number,
): Pick<QuarantinedTests, 'quarantinedRecently' | 'quarantinedOlderThan'> {
  const count = (predicate: (ageSeconds: number) => boolean): number =>
    countWhere(quarantineTimes, (at) => predicate(takenAt - at));
  return {
    quarantinedRecently: new Map(
      QUARANTINE_WINDOWS.map(([window, seconds]) => [window, count((age) => age <= seconds)]),
    ),
    quarantinedOlderThan: new Map(
      QUARANTINE_AGES.map(([age, seconds]) => [age, count((ageSeconds) => ageSeconds > seconds)]),
    ),
  };
}

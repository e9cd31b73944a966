import {
  NO_CODEOWNER,
  OTHER_STATUS,
  QUARANTINE_AGES,
  QUARANTINE_WINDOWS,
  UNHEALTHY_WINDOWS,
} from '../snapshot/types.js';
import type { QuarantinedTests, UnhealthyTests } from '../snapshot/types.js';
import { ofFlakyTests } from './currentSnapshots.js';
import { samplesByKey, type FamilySettings, type PerTargetFamily, type Sample } from './family.js';
import { REFRESHED_BY, refreshedBy } from './help.js';
import { NAMESPACE, fqName } from './naming.js';

const SUBSYSTEM = 'flaky_tests';

/** Label value summing the owners beyond the top N, which keeps the label's cardinality bounded. */
export const OTHER_CODEOWNERS = 'other';

/**
 * Label value of the tests without a code owner. A real owner of that name joins `other`, as one
 * named `other` does, so each of the two labels has one meaning.
 */
export const NO_CODEOWNER_LABEL = 'none';

function freshness(settings: FamilySettings): string {
  return refreshedBy(REFRESHED_BY.quarantinedTests, settings.flakyTestsIntervalSeconds);
}

const FROM_TIMESTAMPS =
  "Counted from each test's quarantine time (API v1 quarantined_at; API v2 quarantinedSince, else " +
  'statusSince) at the time its list was read, over every test listed; tests without one are not counted.';

/** The samples of a fresh snapshot's quarantined tests; none while their list cannot be read. */
function ofQuarantine(
  samples: (
    quarantine: QuarantinedTests,
    repo: string,
    settings: FamilySettings,
  ) => Iterable<Sample>,
): PerTargetFamily['samples'] {
  return ofFlakyTests((snapshot, settings) =>
    snapshot.quarantine === undefined ? [] : samples(snapshot.quarantine, snapshot.repo, settings),
  );
}

/** A `{repo, <label>}` gauge per entry of a map of the quarantined tests. */
function countsBy(
  label: string,
  counts: (quarantine: QuarantinedTests) => ReadonlyMap<string, number>,
): Pick<PerTargetFamily, 'labelNames' | 'samples'> {
  return {
    labelNames: ['repo', label],
    samples: ofQuarantine((quarantine, repo) => samplesByKey([repo], counts(quarantine))),
  };
}

/** The quarantine families, in page order: one per repository, from its fresh snapshot. */
export const FLAKY_TESTS_FAMILIES: readonly PerTargetFamily[] = [
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'quarantined'),
    help: (settings) => `Tests quarantined in the repository. ${freshness(settings)}`,
    type: 'gauge',
    labelNames: ['repo'],
    scope: 'target',
    samples: ofQuarantine(({ count }, repo) => [{ labels: [repo], value: count }]),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'quarantined_by_codeowner'),
    help: (settings) =>
      `Quarantined tests by code owner: the ${settings.topCodeowners} owners with the most, the rest summed ` +
      `under codeowner=${OTHER_CODEOWNERS}, tests without owner under codeowner=${NO_CODEOWNER_LABEL} ` +
      `(owners named ${NO_CODEOWNER_LABEL} or ${OTHER_CODEOWNERS} count under ${OTHER_CODEOWNERS}); ` +
      `a test with several owners counts for each. ${freshness(settings)}`,
    type: 'gauge',
    labelNames: ['repo', 'codeowner'],
    scope: 'target',
    samples: ofQuarantine(({ byCodeowner }, repo, settings) =>
      topCodeownerCounts(byCodeowner, settings.topCodeowners).map(([codeowner, count]) => ({
        labels: [repo, codeowner],
        value: count,
      })),
    ),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'oldest_quarantine_timestamp', 'seconds'),
    help: (settings) =>
      `Unix time of the earliest quarantine among the repository's quarantined tests. ${freshness(settings)}`,
    type: 'gauge',
    labelNames: ['repo'],
    scope: 'target',
    samples: ofQuarantine(({ oldestQuarantinedAt }, repo) =>
      oldestQuarantinedAt === undefined ? [] : [{ labels: [repo], value: oldestQuarantinedAt }],
    ),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'quarantined_recently'),
    help: (settings) =>
      `Tests whose quarantine began within the window (${QUARANTINE_WINDOWS.map(([w]) => w).join(', ')}). ${FROM_TIMESTAMPS} ${freshness(settings)}`,
    type: 'gauge',
    scope: 'target',
    ...countsBy('window', (quarantine) => quarantine.quarantinedRecently),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'quarantined_older_than'),
    help: (settings) =>
      `Tests whose quarantine began longer ago than the age (${QUARANTINE_AGES.map(([a]) => a).join(', ')}). ${FROM_TIMESTAMPS} ${freshness(settings)}`,
    type: 'gauge',
    scope: 'target',
    ...countsBy('age', (quarantine) => quarantine.quarantinedOlderThan),
  },
];

function unhealthyFreshness(settings: FamilySettings): string {
  return (
    'API v2 only: with an API key, whichever API reads the quarantine list; no series with a v1 token alone. ' +
    refreshedBy(REFRESHED_BY.unhealthyTests, settings.flakyTestsIntervalSeconds)
  );
}

/** The samples of a fresh v2 snapshot's unhealthy tests; none from API v1. */
function ofUnhealthyTests(
  samples: (unhealthy: UnhealthyTests, repo: string, settings: FamilySettings) => Iterable<Sample>,
): PerTargetFamily['samples'] {
  return ofFlakyTests((snapshot, settings) =>
    snapshot.unhealthy === undefined ? [] : samples(snapshot.unhealthy, snapshot.repo, settings),
  );
}

/** The flaky and broken tests' families (API v2 only), in page order. */
export const UNHEALTHY_TESTS_FAMILIES: readonly PerTargetFamily[] = [
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'unhealthy'),
    help: (settings) =>
      `Tests of the repository whose status is flaky or broken, quarantined or not (a status Trunk adds counts as ${OTHER_STATUS}). ${unhealthyFreshness(settings)}`,
    type: 'gauge',
    labelNames: ['repo', 'status'],
    scope: 'target',
    samples: ofUnhealthyTests(({ byStatus }, repo) => samplesByKey([repo], byStatus)),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'unhealthy_by_codeowner'),
    help: (settings) =>
      `Flaky or broken tests by status and code owner: per status the ${settings.topCodeowners} owners with the most, the rest summed under codeowner=${OTHER_CODEOWNERS}, tests without owner under codeowner=${NO_CODEOWNER_LABEL}; a test with several owners counts for each. ${unhealthyFreshness(settings)}`,
    type: 'gauge',
    labelNames: ['repo', 'status', 'codeowner'],
    scope: 'target',
    samples: ofUnhealthyTests(({ byCodeowner }, repo, settings) =>
      Array.from(byCodeowner).flatMap(([status, owners]) =>
        topCodeownerCounts(owners, settings.topCodeowners).map(([codeowner, count]) => ({
          labels: [repo, status, codeowner],
          value: count,
        })),
      ),
    ),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'oldest_unhealthy_timestamp', 'seconds'),
    help: (settings) =>
      `Unix time since which the repository's longest-flaky (or longest-broken) test has had its status (the earliest statusSince); absent when no such test carries one. ${unhealthyFreshness(settings)}`,
    type: 'gauge',
    labelNames: ['repo', 'status'],
    scope: 'target',
    samples: ofUnhealthyTests(({ oldestSince }, repo) => samplesByKey([repo], oldestSince)),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'unhealthy_recently'),
    help: (settings) =>
      `Flaky or broken tests whose status began within the window (${UNHEALTHY_WINDOWS.map(([w]) => w).join(', ')}), from each test's statusSince at the time its list was read; tests without one are not counted. ${unhealthyFreshness(settings)}`,
    type: 'gauge',
    labelNames: ['repo', 'status', 'window'],
    scope: 'target',
    samples: ofUnhealthyTests(({ recently }, repo) =>
      Array.from(recently).flatMap(([status, windows]) => samplesByKey([repo, status], windows)),
    ),
  },
];

/**
 * The `limit` owners with the most tests (ties by name), then `none` for the tests without owner
 * if there are any, then `other` summing the rest if there is a rest. Owners literally named
 * `other` or `none` join the rest, so the label never has two meanings.
 */
export function topCodeownerCounts(
  byCodeowner: ReadonlyMap<string, number>,
  limit: number,
): [string, number][] {
  const owners: [string, number][] = [];
  let rest: number | undefined;
  for (const [owner, count] of byCodeowner) {
    if (owner === NO_CODEOWNER) continue;
    if (owner === OTHER_CODEOWNERS || owner === NO_CODEOWNER_LABEL) rest = (rest ?? 0) + count;
    else owners.push([owner, count]);
  }
  owners.sort(([ownerA, countA], [ownerB, countB]) =>
    countA !== countB ? countB - countA : compareStrings(ownerA, ownerB),
  );
  const kept = Math.max(0, Math.floor(limit));
  const result = owners.slice(0, kept);
  for (const [, count] of owners.slice(kept)) rest = (rest ?? 0) + count;
  const none = byCodeowner.get(NO_CODEOWNER);
  if (none !== undefined) result.push([NO_CODEOWNER_LABEL, none]);
  if (rest !== undefined) result.push([OTHER_CODEOWNERS, rest]);
  return result;
}

/** Code-point order, so the choice among tied owners does not depend on the process locale. */
function compareStrings(a: string, b: string): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}

import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import { NO_CODEOWNER, QUARANTINE_AGES, QUARANTINE_WINDOWS } from '../snapshot/types.js';
import { ENDPOINTS } from '../trunk/schemas.js';
import { currentFlakyTestsSnapshots } from './currentSnapshots.js';
import { refreshedBy } from './help.js';
import { NAMESPACE, fqName } from './naming.js';
import type { StatusSource } from './snapshotView.js';

const SUBSYSTEM = 'flaky_tests';

const QUARANTINED = fqName(NAMESPACE, SUBSYSTEM, 'quarantined');
const QUARANTINED_BY_CODEOWNER = fqName(NAMESPACE, SUBSYSTEM, 'quarantined_by_codeowner');
const OLDEST_QUARANTINE = fqName(NAMESPACE, SUBSYSTEM, 'oldest_quarantine_timestamp', 'seconds');
const QUARANTINED_RECENTLY = fqName(NAMESPACE, SUBSYSTEM, 'quarantined_recently');
const QUARANTINED_OLDER_THAN = fqName(NAMESPACE, SUBSYSTEM, 'quarantined_older_than');

/** Label value summing the owners beyond the top N, which keeps the label's cardinality bounded. */
export const OTHER_CODEOWNERS = 'other';

interface FlakyTestsMetricsOptions {
  readonly registry: Registry;
  /** The statuses of the targets whose series to render. */
  readonly source: StatusSource;
  readonly intervalSeconds: number;
  readonly topCodeowners: number;
}

/** Registers the quarantine gauges; each rebuilds itself from the store's fresh snapshots on scrape. */
export function registerFlakyTestsMetrics(options: FlakyTestsMetricsOptions): void {
  const { registry, source, topCodeowners } = options;
  const freshness = refreshedBy(ENDPOINTS.listQuarantinedTests, options.intervalSeconds);

  new Gauge({
    name: QUARANTINED,
    help: `Tests quarantined in the repository. ${freshness}`,
    labelNames: ['repo'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const snapshot of currentFlakyTestsSnapshots(source)) {
        this.set({ repo: snapshot.repo }, snapshot.quarantined);
      }
    },
  });

  new Gauge({
    name: QUARANTINED_BY_CODEOWNER,
    help:
      `Quarantined tests by code owner: the ${topCodeowners} owners with the most, the rest summed ` +
      `under codeowner=${OTHER_CODEOWNERS}, tests without owner under codeowner=${NO_CODEOWNER}; ` +
      `a test with several owners counts for each. ${freshness}`,
    labelNames: ['repo', 'codeowner'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const snapshot of currentFlakyTestsSnapshots(source)) {
        for (const [codeowner, count] of topCodeownerCounts(snapshot.byCodeowner, topCodeowners)) {
          this.set({ repo: snapshot.repo, codeowner }, count);
        }
      }
    },
  });

  new Gauge({
    name: OLDEST_QUARANTINE,
    help: `Unix time of the earliest quarantine among the repository's quarantined tests. ${freshness}`,
    labelNames: ['repo'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const snapshot of currentFlakyTestsSnapshots(source)) {
        if (snapshot.oldestQuarantinedAt === undefined) continue;
        this.set({ repo: snapshot.repo }, snapshot.oldestQuarantinedAt);
      }
    },
  });

  const fromTimestamps =
    "Counted from each test's quarantined_at at the poll's time, over every test listed; tests " +
    'without quarantined_at are not counted.';

  new Gauge({
    name: QUARANTINED_RECENTLY,
    help: `Tests whose quarantine began within the window (${QUARANTINE_WINDOWS.map(([w]) => w).join(', ')}). ${fromTimestamps} ${freshness}`,
    labelNames: ['repo', 'window'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const snapshot of currentFlakyTestsSnapshots(source)) {
        for (const [window, count] of snapshot.quarantinedRecently) {
          this.set({ repo: snapshot.repo, window }, count);
        }
      }
    },
  });

  new Gauge({
    name: QUARANTINED_OLDER_THAN,
    help: `Tests whose quarantine began longer ago than the age (${QUARANTINE_AGES.map(([a]) => a).join(', ')}). ${fromTimestamps} ${freshness}`,
    labelNames: ['repo', 'age'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const snapshot of currentFlakyTestsSnapshots(source)) {
        for (const [age, count] of snapshot.quarantinedOlderThan) {
          this.set({ repo: snapshot.repo, age }, count);
        }
      }
    },
  });
}

/**
 * The `limit` owners with the most tests (ties by name), then `none` if present, then `other`
 * summing the rest if there is a rest. An owner literally named `other` joins the rest, so the
 * label never has two meanings.
 */
export function topCodeownerCounts(
  byCodeowner: ReadonlyMap<string, number>,
  limit: number,
): [string, number][] {
  const owners: [string, number][] = [];
  let rest: number | undefined;
  for (const [owner, count] of byCodeowner) {
    if (owner === NO_CODEOWNER) continue;
    if (owner === OTHER_CODEOWNERS) rest = (rest ?? 0) + count;
    else owners.push([owner, count]);
  }
  owners.sort(([ownerA, countA], [ownerB, countB]) =>
    countA !== countB ? countB - countA : compareStrings(ownerA, ownerB),
  );
  const kept = Math.max(0, Math.floor(limit));
  const result = owners.slice(0, kept);
  for (const [, count] of owners.slice(kept)) rest = (rest ?? 0) + count;
  const none = byCodeowner.get(NO_CODEOWNER);
  if (none !== undefined) result.push([NO_CODEOWNER, none]);
  if (rest !== undefined) result.push([OTHER_CODEOWNERS, rest]);
  return result;
}

/** Code-point order, so the choice among tied owners does not depend on the process locale. */
function compareStrings(a: string, b: string): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}

// v2's flaky-test bodies (TestCaseSummary, TestCaseMetrics, Label, TestCollection) rendered from
// the world's tests, quarantined or not. What v1 never shows (labels, metrics, build targets) is a
// pure function of the test's id, so every read of a test says the same and no stream moves.
import type { QuarantineStatus } from './quarantineModel.js';
import { stableUuid, unitHash } from './random.js';
import { isoTimestamp } from './responses.js';
import type { TestIdentity } from './vocabulary.js';

/** A test of a collection as the v2 view lists it, quarantined or not. */
export interface ViewTest extends TestIdentity {
  readonly testCaseId: string;
  readonly codeowners: readonly string[];
  readonly variant: string;
  readonly status: QuarantineStatus;
  /** Unix seconds; undefined for a test no monitor ever classified. */
  readonly statusSince: number | undefined;
  /** Unix seconds; undefined when the test is not quarantined. */
  readonly quarantinedSince: number | undefined;
}

export const TEST_STATUSES = ['healthy', 'flaky', 'broken'] as const;
export type TestStatusV2 = (typeof TEST_STATUSES)[number];

/** The metrics windows of `period`, in days. */
export const METRIC_PERIODS = { '1d': 1, '7d': 7, '14d': 14, '30d': 30 } as const;
export type MetricPeriod = keyof typeof METRIC_PERIODS;

export interface LabelV2Body {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly assignedAt: string;
  readonly sources: readonly Record<string, unknown>[];
}

export interface TestCaseMetricsV2Body {
  readonly failureRate: number;
  readonly prsImpacted: number;
  readonly runCount: number;
  readonly failureCount: number;
  readonly durationP95Ms: number | null;
  readonly lastRunAt: string | null;
  readonly lastFailureAt: string | null;
}

export interface TestV2Body {
  readonly id: string;
  readonly testCollectionId: string;
  readonly repoId: string;
  readonly name: string;
  readonly parentName: string;
  readonly className: string;
  readonly file: string;
  readonly target: string;
  readonly variant: string;
  readonly crossVariantId: string | null;
  readonly codeowners: string[];
  readonly status: TestStatusV2;
  readonly statusSince: string | null;
  readonly quarantineState: 'quarantined' | 'notQuarantined';
  readonly labels: LabelV2Body[];
  /** Only with include=metrics: null when the test had no runs in the period. */
  readonly metrics?: TestCaseMetricsV2Body | null;
  /** Since 2026-10-26 on the live service (absent from the published snapshot). */
  readonly quarantinedSince: string | null;
  readonly url: string;
}

export interface TestCollectionV2Body {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly testCaseCount: number;
  readonly quarantineEnabled: boolean;
  readonly autoQuarantineEnabled: boolean;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** v2's spelling of a status. */
export function statusV2(status: QuarantineStatus): TestStatusV2 {
  return status === 'HEALTHY' ? 'healthy' : status === 'FLAKY' ? 'flaky' : 'broken';
}

/** Whether someone set the manual "flag as flaky" mark on the test (hidden; a filter reads it). */
export function isMarkedFlaky(test: ViewTest): boolean {
  return unitHash(`marked-flaky:${test.testCaseId}`) < (test.status === 'FLAKY' ? 0.2 : 0.02);
}

/**
 * The labels of a test: a slow-test monitor's `slow-on-prs` on a few, and a person's
 * `known-issue` on some unhealthy ones; assigned some days before `anchor` (unix seconds).
 */
export function labelsOf(test: ViewTest, anchor: number): LabelV2Body[] {
  const labels: LabelV2Body[] = [];
  const daysBefore = (key: string) =>
    isoTimestamp(anchor - Math.floor(unitHash(`${key}:${test.testCaseId}`) * 30) * 86_400 - 3600);
  if (unitHash(`label-slow:${test.testCaseId}`) < 0.08) {
    const assignedAt = daysBefore('label-slow-at');
    labels.push({
      id: stableUuid('label:slow-on-prs'),
      name: 'slow-on-prs',
      description: 'Tests that only get slow on pull-request runs.',
      assignedAt,
      sources: [
        {
          type: 'monitor',
          monitorId: stableUuid('monitor:slow-test'),
          monitorType: 'slowTest',
          assignedAt,
        },
      ],
    });
  }
  if (test.status !== 'HEALTHY' && unitHash(`label-known:${test.testCaseId}`) < 0.15) {
    const assignedAt = daysBefore('label-known-at');
    const byToken = unitHash(`label-known-token:${test.testCaseId}`) < 0.3;
    labels.push({
      id: stableUuid('label:known-issue'),
      name: 'known-issue',
      description: 'Failing for a reason someone is already fixing.',
      assignedAt,
      sources: [
        {
          type: 'user',
          // An API token resolves to no user.
          user: byToken ? null : { id: stableUuid('user:oncall'), name: 'On-call engineer' },
          assignedAt,
        },
      ],
    });
  }
  return labels;
}

/** Distinct pull requests a failure hits, on average: some fail on the same pull request twice. */
const PRS_PER_FAILURE = 0.6;

/**
 * The test's metrics over `period`, or null when it had no runs then. Counts follow its status;
 * times are ages before `now` that depend on the test only, so metric sorts keep their order.
 */
export function metricsOf(
  test: ViewTest,
  period: MetricPeriod,
  now: number,
): TestCaseMetricsV2Body | null {
  const hash = (key: string) => unitHash(`${key}:${test.testCaseId}:${period}`);
  if (hash('ran') < 0.04) return null;
  const days = METRIC_PERIODS[period];
  const runCount = Math.max(1, Math.round(days * (3 + hash('runs') * 40)));
  const rate =
    test.status === 'BROKEN'
      ? 0.6 + 0.4 * hash('rate')
      : test.status === 'FLAKY'
        ? 0.03 + 0.25 * hash('rate')
        : hash('rate') < 0.85
          ? 0
          : 0.01 * hash('rate-healthy');
  const failureCount = Math.round(runCount * rate);
  const age = lastRunAge(test, period);
  // Pull requests that saw it fail "while it was unhealthy and not quarantined": none when it was
  // healthy all the period (never classified, or healthy since before it) or quarantined all of it.
  const start = now - days * 86_400;
  const unhealthyInPeriod = test.status !== 'HEALTHY' || (test.statusSince ?? -Infinity) > start;
  const quarantinedAllPeriod = (test.quarantinedSince ?? Infinity) <= start;
  return {
    failureRate: failureCount / runCount,
    prsImpacted:
      unhealthyInPeriod && !quarantinedAllPeriod ? Math.round(failureCount * PRS_PER_FAILURE) : 0,
    runCount,
    failureCount,
    durationP95Ms: hash('skipped') < 0.02 ? null : Math.round(150 + hash('duration') * 45_000),
    lastRunAt: isoTimestamp(now - age),
    lastFailureAt: failureCount > 0 ? isoTimestamp(now - lastFailureAge(test, period)) : null,
  };
}

/** Seconds since the test last ran (within a day: tests run often). */
function lastRunAge(test: ViewTest, period: MetricPeriod): number {
  return 60 + Math.floor(unitHash(`last-run:${test.testCaseId}:${period}`) * 86_340);
}

/** Seconds since the test last failed (within the period, not before its last run). */
function lastFailureAge(test: ViewTest, period: MetricPeriod): number {
  const span = METRIC_PERIODS[period] * 86_400 - lastRunAge(test, period);
  return lastRunAge(test, period) + Math.floor(unitHash(`last-failure:${test.testCaseId}`) * span);
}

/** The build target that ran the test: Bazel's for Go, Gradle's for JUnit, none for Jest. */
function targetOf(test: ViewTest): string {
  if (test.file?.endsWith('.go') === true) {
    const folder = test.file.slice(0, test.file.lastIndexOf('/'));
    return `//${folder}:go_default_test`;
  }
  if (test.file?.endsWith('.kt') === true) return ':app:testDebugUnitTest';
  return '';
}

/** One row of `GET /v2/tests`. */
export function renderTestV2(
  test: ViewTest,
  ids: { readonly testCollectionId: string; readonly repoId: string },
  extras: { readonly labelAnchor: number; readonly metrics?: TestCaseMetricsV2Body | null },
): TestV2Body {
  const { metrics } = extras;
  return {
    id: test.testCaseId,
    testCollectionId: ids.testCollectionId,
    repoId: ids.repoId,
    name: test.name,
    // The definition types these as plain strings: "" says the framework reported none.
    parentName: test.parent ?? '',
    className: test.classname ?? '',
    file: test.file ?? '',
    target: targetOf(test),
    variant: test.variant,
    crossVariantId:
      test.variant === ''
        ? null
        : stableUuid(`cross-variant:${test.name}:${test.parent ?? ''}:${test.file ?? ''}`),
    codeowners: [...test.codeowners],
    status: statusV2(test.status),
    statusSince: test.statusSince === undefined ? null : isoTimestamp(test.statusSince),
    quarantineState: test.quarantinedSince === undefined ? 'notQuarantined' : 'quarantined',
    labels: labelsOf(test, extras.labelAnchor),
    ...(metrics === undefined ? {} : { metrics }),
    quarantinedSince:
      test.quarantinedSince === undefined ? null : isoTimestamp(test.quarantinedSince),
    url: `https://app.trunk.io/tests/${test.testCaseId}`,
  };
}

/** The metric a metric sort orders by, larger is worse; undefined when the test has none. */
export function metricSortValue(
  test: ViewTest,
  sort: 'failureRate' | 'durationP95' | 'prsImpacted' | 'lastRunAt' | 'lastFailureAt',
  period: MetricPeriod,
  now: number,
): number | undefined {
  const metrics = metricsOf(test, period, now);
  if (metrics === null) return undefined;
  switch (sort) {
    case 'failureRate':
      return metrics.failureRate;
    case 'durationP95':
      return metrics.durationP95Ms ?? undefined;
    case 'prsImpacted':
      return metrics.prsImpacted;
    // Ages, negated: the most recent first when descending, and fixed while the clock moves.
    case 'lastRunAt':
      return -lastRunAge(test, period);
    case 'lastFailureAt':
      return metrics.lastFailureAt === null ? undefined : -lastFailureAge(test, period);
  }
}

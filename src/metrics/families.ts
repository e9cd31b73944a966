// Every family the engine renders from snapshots, in page order. Each resource file holds its own
// list; adding a family is one entry there.
import {
  BUILD_INFO,
  EXPORTER_SUMMARY_FAMILIES,
  TARGET_STATUS_FAMILIES,
  TARGET_UP,
} from './exporterMetrics.js';
import type { FamilyDefinition } from './family.js';
import { FLAKY_TESTS_FAMILIES, UNHEALTHY_TESTS_FAMILIES } from './flakyTestsMetrics.js';
import { MERGE_QUEUE_FAMILIES } from './mergeQueueMetrics.js';
import { QUEUE_FLOW_FAMILIES } from './queueFlowMetrics.js';
import { selectionProblems } from './selection.js';
import { TESTING_FAMILIES } from './testingMetrics.js';
import { WEBHOOK_FAMILIES } from './webhookFamilies.js';
import type { MetricSelection, SelectionProblem } from './selection.js';

export const SNAPSHOT_FAMILIES: readonly FamilyDefinition[] = [
  ...MERGE_QUEUE_FAMILIES,
  ...QUEUE_FLOW_FAMILIES,
  ...TESTING_FAMILIES,
  ...FLAKY_TESTS_FAMILIES,
  ...UNHEALTHY_TESTS_FAMILIES,
  ...WEBHOOK_FAMILIES,
  ...TARGET_STATUS_FAMILIES,
  ...EXPORTER_SUMMARY_FAMILIES,
];

/** The exporter's own health: `metrics.include` and `metrics.exclude` never drop these. */
export const UNSELECTABLE_FAMILIES: ReadonlySet<string> = new Set([TARGET_UP, BUILD_INFO]);

/** What is wrong with a `metrics.include` / `metrics.exclude` selection; empty when nothing. */
export function metricSelectionProblems(selection: MetricSelection): SelectionProblem[] {
  return selectionProblems(
    SNAPSHOT_FAMILIES.map(({ name }) => name),
    selection,
    UNSELECTABLE_FAMILIES,
  );
}

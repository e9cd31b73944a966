// Every family the engine renders from snapshots, in page order. Each resource file holds its own
// list; adding a family is one entry there.
import { globMatches } from '../config/glob.js';
import {
  BUILD_INFO,
  EXPORTER_SUMMARY_FAMILIES,
  TARGET_STATUS_FAMILIES,
  TARGET_UP,
} from './exporterMetrics.js';
import { ENTRY_HISTORY_FAMILIES } from './entryHistoryMetrics.js';
import type { FamilyDefinition } from './family.js';
import { FLAKY_TESTS_FAMILIES, UNHEALTHY_TESTS_FAMILIES } from './flakyTestsMetrics.js';
import { MERGE_QUEUE_FAMILIES } from './mergeQueueMetrics.js';
import { EXITS_BY_SOURCE, QUEUE_FLOW_FAMILIES } from './queueFlowMetrics.js';
import { selectionEntryProblem } from './selection.js';
import { TEST_COLLECTION_FAMILIES, TEST_COST_FAMILIES } from './testCostMetrics.js';
import { TESTING_FAMILIES } from './testingMetrics.js';
import { VERIFICATION_RUN_FAMILIES } from './verificationRunMetrics.js';
import { FAILED_BY_REASON, WEBHOOK_FAMILIES } from './webhookFamilies.js';

export const SNAPSHOT_FAMILIES: readonly FamilyDefinition[] = [
  ...MERGE_QUEUE_FAMILIES,
  ...QUEUE_FLOW_FAMILIES,
  ...TESTING_FAMILIES,
  ...VERIFICATION_RUN_FAMILIES,
  ...ENTRY_HISTORY_FAMILIES,
  ...FLAKY_TESTS_FAMILIES,
  ...UNHEALTHY_TESTS_FAMILIES,
  ...TEST_COST_FAMILIES,
  ...TEST_COLLECTION_FAMILIES,
  ...WEBHOOK_FAMILIES,
  ...TARGET_STATUS_FAMILIES,
  ...EXPORTER_SUMMARY_FAMILIES,
];

/**
 * The families only webhook events can move (failures by reason are also read from the queue-entry
 * histories, API v2): with webhooks off they are left out, as a family only
 * one API can feed is absent where the other is in use (their counts stay in the store, and are
 * back if a reload turns webhooks on again).
 */
export const WEBHOOK_ONLY_FAMILIES: readonly string[] = [
  ...WEBHOOK_FAMILIES.map(({ name }) => name).filter((name) => name !== FAILED_BY_REASON),
  EXITS_BY_SOURCE,
];

/** The exporter's own health: `metrics.include` and `metrics.exclude` never drop these. */
export const UNSELECTABLE_FAMILIES: ReadonlySet<string> = new Set([TARGET_UP, BUILD_INFO]);

/**
 * What is wrong with one entry of `metrics.include` or `metrics.exclude` (the configuration
 * loader's MetricSelectionCheck); undefined when nothing.
 */
export function metricSelectionEntryProblem(
  list: 'include' | 'exclude',
  entry: string,
): string | undefined {
  return selectionEntryProblem(
    SNAPSHOT_FAMILIES.map(({ name }) => name),
    list,
    entry,
    UNSELECTABLE_FAMILIES,
  );
}

/**
 * Why an entry of `metrics.include` selects nothing while webhooks are off: every family it matches
 * is one only webhook events move, which the page leaves out then (the configuration loader's
 * MetricSelectionWarning); undefined otherwise.
 */
export function metricSelectionEntryWarning(
  entry: string,
  settings: { readonly webhooksEnabled: boolean },
): string | undefined {
  if (settings.webhooksEnabled) return undefined;
  const matched = SNAPSHOT_FAMILIES.filter(({ name }) => globMatches(entry, name));
  if (matched.length === 0 || !matched.every(({ name }) => WEBHOOK_ONLY_FAMILIES.includes(name)))
    return undefined;
  return `"${entry}" matches only families that webhook events move, which are left off the page while webhooks.enabled is false: it selects nothing; turn webhooks on or remove it`;
}

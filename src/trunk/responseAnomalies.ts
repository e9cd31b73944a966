// Odd data in responses that match their schemas, found after parsing and before anything is
// interpreted: each is reported (trunk_exporter_api_anomalies_total) and made harmless here, so no
// poll, lookup or flow counter ever sees it.
import type { ApiAnomalyKind } from './observer.js';
import {
  QUEUE_SETTING_FIELDS,
  type EnqueuedPullRequest,
  type MergeQueue,
  type MergeQueueResponse,
  type QuarantinedTestsPage,
  type QuarantinedTestsPageResponse,
  type SubmittedPullRequest,
} from './schemas.js';
import { LabelTextCuts, cutLabelText, isOverlong, isUnfitName } from './labelText.js';
import { settingsReadAsAbsent } from './queueSettings.js';
import { isExportableMs, parseRfc3339 } from './timestamps.js';
import { UNUSABLE_ITEM } from './tolerantSchemas.js';
import {
  V2_QUEUE_CONFIG_FIELDS,
  V2_TESTING_OUTCOMES,
  type V2MergeQueue,
  type V2Page,
  type V2PageResponse,
  type V2PullRequest,
  type V2Test,
  type V2TestCollection,
  type V2TestingResult,
} from './v2Schemas.js';

/**
 * Reports `count` anomalies of `kind` in the response at hand; `fields`, where given, names where
 * they are (`concurrency`, `xK9mP2nQ.config.mergeMethod`), for the log line.
 */
export type AnomalyReport = (
  kind: ApiAnomalyKind,
  count: number,
  fields?: readonly string[],
) => void;

/**
 * The queue with each PR number once: of entries sharing a number, the one with the latest
 * stateChangedAt (the first of equals) stays, in its place. Counting both would double the PR in
 * every count and look it up twice; keeping one by list order would flip its state poll by poll.
 * Reports (`invalid_field`) each setting the schema read as absent: of another type, or a number
 * that is a fraction or below its floor (queueSettings.ts).
 */
export function checkQueue(response: MergeQueueResponse, report: AnomalyReport): MergeQueue {
  reportSettingsReadAsAbsent(
    [...emptyState(response), ...settingsReadAsAbsent(response, QUEUE_SETTING_FIELDS)],
    report,
  );
  const queue = withQueueLabelsCut(
    { ...response, enqueuedPullRequests: usableItems(response.enqueuedPullRequests, report) },
    report,
  );
  const items = queue.enqueuedPullRequests;
  // Most queues have no duplicate: found with a set of numbers, before any timestamp is read.
  const numbers = new Set<number>();
  const repeated = new Set<number>();
  for (const item of items) {
    if (numbers.has(item.prNumber)) repeated.add(item.prNumber);
    else numbers.add(item.prNumber);
  }
  let checked = queue;
  if (repeated.size > 0) {
    report('duplicate_pr', items.length - numbers.size);
    checked = { ...queue, enqueuedPullRequests: latestEntries(items, repeated) };
  }
  reportTimestamps(
    checked.enqueuedPullRequests.map((item) => item.stateChangedAt),
    report,
  );
  return checked;
}

/**
 * The queue with each value it gives a label cut when too long, and reported (`invalid_field`):
 * its state and the settings named in `trunk_merge_queue_info`, each item's state and priority name.
 */
function withQueueLabelsCut(queue: MergeQueue, report: AnomalyReport): MergeQueue {
  const cuts = new LabelTextCuts();
  const optional = (text: string | undefined): string | undefined =>
    text === undefined ? undefined : cuts.cut(text);
  const items = queue.enqueuedPullRequests.map((item) =>
    isOverlong(item.state ?? '') || isOverlong(item.priorityName ?? '')
      ? { ...item, state: optional(item.state), priorityName: optional(item.priorityName) }
      : item,
  );
  const named = {
    state: cuts.cut(queue.state),
    mode: optional(queue.mode),
    mergeMethod: optional(queue.mergeMethod),
    directMergeMode: optional(queue.directMergeMode),
    optimizationMode: optional(queue.optimizationMode),
  };
  if (cuts.count === 0) return queue;
  report('invalid_field', cuts.count);
  return { ...queue, ...named, enqueuedPullRequests: items };
}

/** The items with each of the `repeated` numbers once: its latest entry (the first of equals), in its place. */
function latestEntries(
  items: readonly EnqueuedPullRequest[],
  repeated: ReadonlySet<number>,
): EnqueuedPullRequest[] {
  const latest = new Map<number, { readonly index: number; readonly at: number }>();
  items.forEach((item, index) => {
    if (!repeated.has(item.prNumber)) return;
    // An entry without a usable timestamp is the oldest.
    const at =
      item.stateChangedAt === undefined
        ? Number.NEGATIVE_INFINITY
        : (parseRfc3339(item.stateChangedAt) ?? Number.NEGATIVE_INFINITY);
    const kept = latest.get(item.prNumber);
    if (kept === undefined || at > kept.at) latest.set(item.prNumber, { index, at });
  });
  return items.filter(
    (item, index) => !repeated.has(item.prNumber) || latest.get(item.prNumber)?.index === index,
  );
}

/**
 * Reports a stateChangedAt that is not an RFC 3339 date-time or lies outside 2000-2100, and cuts and
 * reports (`invalid_field`) a state too long for a label value.
 */
export function checkSubmittedPullRequest(
  pr: SubmittedPullRequest,
  report: AnomalyReport,
): SubmittedPullRequest {
  reportTimestamps([pr.stateChangedAt], report);
  if (pr.state === undefined || !isOverlong(pr.state)) return pr;
  report('invalid_field', 1);
  return { ...pr, state: cutLabelText(pr.state) };
}

/**
 * Drops and reports unusable rows; reports each quarantined_at that cannot be exported; cuts and
 * reports (`invalid_field`) each code owner too long for a label value.
 */
export function checkQuarantinedTestsPage(
  response: QuarantinedTestsPageResponse,
  report: AnomalyReport,
): QuarantinedTestsPage {
  const page = {
    ...response,
    quarantined_tests: withOwnersCut(usableItems(response.quarantined_tests, report), report),
  };
  reportTimestamps(
    page.quarantined_tests.map((test) => test.quarantined_at),
    report,
  );
  return page;
}

/**
 * Checks a page of a v2 list: drops and reports unusable rows, and reports each timestamp that
 * `timestampsOf` reads from a usable row and that cannot be exported.
 */
export function checkV2Page<T>(
  timestampsOf: (row: T) => readonly (string | null | undefined)[] = () => [],
): (response: V2PageResponse<T>, report: AnomalyReport) => V2Page<T> {
  return (response, report) => {
    const data = usableItems(response.data, report);
    reportTimestamps(data.flatMap(timestampsOf), report);
    return { ...response, data };
  };
}

/**
 * Reports (`invalid_field`) each of `texts` too long for a label value. API v2's enum values and
 * names are cut where they become one (v2Vocabulary.ts); counted here, as v1's are (checkQueue).
 */
function reportOverlong(texts: readonly (string | undefined)[], report: AnomalyReport): void {
  let overlong = 0;
  for (const text of texts) if (text !== undefined && isOverlong(text)) overlong += 1;
  if (overlong > 0) report('invalid_field', overlong);
}

/** The values of a v2 merge queue that `trunk_merge_queue_info` and its state show as labels. */
function queueLabelTexts({ state, mode, config }: V2MergeQueue): (string | undefined)[] {
  return [state, mode, config.mergeMethod, config.directMergeMode, config.optimizationMode];
}

/** Reports (`invalid_field`) the settings the schema read as absent, by name. */
function reportSettingsReadAsAbsent(names: readonly string[], report: AnomalyReport): void {
  if (names.length > 0) report('invalid_field', names.length, names);
}

/**
 * The settings of a v2 queue (its `mode`, those of its `config`) the schema read as absent, and its
 * state when empty.
 */
function v2SettingsReadAsAbsent(queue: V2MergeQueue): string[] {
  const { mode, config } = queue;
  const names = settingsReadAsAbsent(config, V2_QUEUE_CONFIG_FIELDS).map(
    (name) => `config.${name}`,
  );
  return [...emptyState(queue), ...(mode === undefined ? ['mode'] : []), ...names];
}

/**
 * `['state']` for a queue whose state is empty, an enum value in both definitions, which the poll
 * shows as `unknown` as a mode read as absent: an empty label value is to Prometheus no label.
 */
function emptyState({ state }: { readonly state: string }): string[] {
  return state === '' ? ['state'] : [];
}

/**
 * Checks one v2 merge queue: reports each label value too long (see reportOverlong) and each
 * setting the schema read as absent (of another type, or a number that is a fraction or below its floor).
 */
export function checkV2MergeQueue(queue: V2MergeQueue, report: AnomalyReport): V2MergeQueue {
  reportOverlong(queueLabelTexts(queue), report);
  reportSettingsReadAsAbsent(v2SettingsReadAsAbsent(queue), report);
  return queue;
}

const checkMergeQueueRows = checkV2Page<V2MergeQueue>();

/**
 * Checks a page of v2 merge queues as every v2 page, and reports each label value too long and
 * each setting the schema read as absent (of another type, or a number that is a fraction or below its floor).
 */
export function checkV2MergeQueuesPage(
  response: V2PageResponse<V2MergeQueue>,
  report: AnomalyReport,
): V2Page<V2MergeQueue> {
  const page = checkMergeQueueRows(response, report);
  reportOverlong(page.data.flatMap(queueLabelTexts), report);
  // Named with the queue's id (cut as a label value would be): a page lists many queues.
  reportSettingsReadAsAbsent(
    page.data.flatMap((queue) =>
      v2SettingsReadAsAbsent(queue).map((name) => `${cutLabelText(queue.id)}.${name}`),
    ),
    report,
  );
  return page;
}

const checkPullRequestRows = checkV2Page<V2PullRequest>(({ queueEntry }) => [
  queueEntry.stateChangedAt,
  queueEntry.createdAt,
]);

/**
 * Checks a page of a queue's pull requests as every v2 page (unusable rows, stateChangedAt and
 * createdAt), and reports each label value too long: an entry's state and priority name, and
 * the codes of its mergeability reasons.
 */
export function checkV2PullRequestsPage(
  response: V2PageResponse<V2PullRequest>,
  report: AnomalyReport,
): V2Page<V2PullRequest> {
  const page = checkPullRequestRows(response, report);
  // Counted in place: the live entries of every queue are read on every poll.
  let overlong = 0;
  for (const { queueEntry } of page.data) {
    if (isOverlong(queueEntry.state)) overlong += 1;
    if (queueEntry.priorityName != null && isOverlong(queueEntry.priorityName)) overlong += 1;
    for (const { code } of queueEntry.readiness?.mergeabilityDetails?.reasons ?? []) {
      if (isOverlong(code)) overlong += 1;
    }
  }
  if (overlong > 0) report('invalid_field', overlong);
  return page;
}

const TESTING_OUTCOMES: ReadonlySet<string> = new Set(V2_TESTING_OUTCOMES);
const checkTestingResultRows = checkV2Page<V2TestingResult>((row) => [row.endedAt]);

/**
 * Checks a page of testing results as every v2 page (unusable rows, each endedAt), and reports each
 * outcome outside Trunk's documented ones as `unknown_value`: its attempt counts under `other`.
 */
export function checkTestingResultsPage(
  response: V2PageResponse<V2TestingResult>,
  report: AnomalyReport,
): V2Page<V2TestingResult> {
  const page = checkTestingResultRows(response, report);
  const unknown = page.data.filter(
    ({ outcome }) => outcome !== undefined && !TESTING_OUTCOMES.has(outcome),
  ).length;
  if (unknown > 0) report('unknown_value', unknown);
  return page;
}

/** The items that fit their schema, in order; the others are reported as `invalid_item`. */
function usableItems<T>(items: readonly (T | typeof UNUSABLE_ITEM)[], report: AnomalyReport): T[] {
  const usable = items.filter((item): item is T => item !== UNUSABLE_ITEM);
  if (usable.length < items.length) report('invalid_item', items.length - usable.length);
  return usable;
}

/**
 * Reports the timestamps present that are not RFC 3339 date-times (`invalid_field`) and those
 * outside 2000-2100 (`timestamp_out_of_range`). Neither is ever exported (poller/timestamps.ts).
 */
function reportTimestamps(
  timestamps: readonly (string | null | undefined)[],
  report: AnomalyReport,
): void {
  let invalid = 0;
  let outOfRange = 0;
  for (const timestamp of timestamps) {
    if (timestamp === undefined || timestamp === null) continue;
    const epochMs = parseRfc3339(timestamp);
    if (epochMs === undefined) invalid += 1;
    else if (!isExportableMs(epochMs)) outOfRange += 1;
  }
  if (invalid > 0) report('invalid_field', invalid);
  if (outOfRange > 0) report('timestamp_out_of_range', outOfRange);
}

const checkCollectionRows = checkV2Page<V2TestCollection>();

/**
 * Checks a page of test collections as every v2 page, and cuts and reports (`invalid_field`) each
 * name too long for a label value; an empty name, which the definition allows, reads as `unknown`.
 */
export function checkTestCollectionsPage(
  response: V2PageResponse<V2TestCollection>,
  report: AnomalyReport,
): V2Page<V2TestCollection> {
  const page = checkCollectionRows(response, report);
  if (!page.data.some(({ name }) => isUnfitName(name))) return page;
  const cuts = new LabelTextCuts();
  const data = page.data.map((collection) => ({ ...collection, name: cuts.name(collection.name) }));
  if (cuts.count > 0) report('invalid_field', cuts.count);
  return { ...page, data };
}

/** Rows whose code owners are label values: each one too long cut, and reported. */
function withOwnersCut<T extends { readonly codeowners: readonly string[] }>(
  rows: readonly T[],
  report: AnomalyReport,
): T[] {
  const cuts = new LabelTextCuts();
  const kept = rows.map((row) =>
    row.codeowners.some(isOverlong)
      ? { ...row, codeowners: row.codeowners.map((owner) => cuts.cut(owner)) }
      : row,
  );
  if (cuts.count > 0) report('invalid_field', cuts.count);
  return kept;
}

const checkTestRows = checkV2Page<V2Test>((test) => [test.quarantinedSince ?? test.statusSince]);

/**
 * Checks a page of an organization's tests as every v2 page (unusable rows, each quarantinedSince,
 * else statusSince), reports (`invalid_field`) each count of a test's metrics that is missing or
 * no whole number ≥ 0 (the definition requires them; it adds nothing) and, when they were asked
 * for (`metricsAsked`), each row without metrics (its status's sums are then unknown), and cuts and reports each
 * code owner too long for a label value.
 */
export function checkTestsPage(
  response: V2PageResponse<V2Test>,
  report: AnomalyReport,
  metricsAsked = false,
): V2Page<V2Test> {
  const page = checkTestRows(response, report);
  let unusableCounts = 0;
  for (const { metrics } of page.data) {
    // Asked (`include=metrics`), a row's metrics are "Returned": absent, or not metrics, is odd.
    if (metrics === undefined && metricsAsked) unusableCounts += 1;
    if (metrics == null) continue;
    for (const count of [metrics.failureCount, metrics.runCount, metrics.prsImpacted])
      if (count === undefined) unusableCounts += 1;
  }
  if (unusableCounts > 0) report('invalid_field', unusableCounts);
  return { ...page, data: withOwnersCut(page.data, report) };
}

// Odd data in responses that match their schemas, found after parsing and before anything is
// interpreted: each is reported (trunk_exporter_api_anomalies_total) and made harmless here, so no
// poll, lookup or flow counter ever sees it.
import type { ApiAnomalyKind } from './observer.js';
import type {
  EnqueuedPullRequest,
  MergeQueue,
  QuarantinedTestsPage,
  SubmittedPullRequest,
} from './schemas.js';
import { isOutOfExportBounds, parseRfc3339 } from './timestamps.js';

/** Reports `count` anomalies of `kind` in the response at hand. */
export type AnomalyReport = (kind: ApiAnomalyKind, count: number) => void;

/**
 * The queue with each PR number once: of entries sharing a number, the one with the latest
 * stateChangedAt (the first of equals) stays, in its place. Counting both would double the PR in
 * every count and look it up twice; keeping one by list order would flip its state poll by poll.
 */
export function checkQueue(queue: MergeQueue, report: AnomalyReport): MergeQueue {
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
  reportOutOfRange(
    checked.enqueuedPullRequests.map((item) => item.stateChangedAt),
    report,
  );
  return checked;
}

/** The items with each of the `repeated` numbers once: its latest entry (the first of equals), in its place. */
function latestEntries(
  items: readonly EnqueuedPullRequest[],
  repeated: ReadonlySet<number>,
): EnqueuedPullRequest[] {
  const latest = new Map<number, { readonly index: number; readonly at: number }>();
  items.forEach((item, index) => {
    if (!repeated.has(item.prNumber)) return;
    // The schema has checked the format: never undefined here.
    const at = parseRfc3339(item.stateChangedAt) ?? Number.NEGATIVE_INFINITY;
    const kept = latest.get(item.prNumber);
    if (kept === undefined || at > kept.at) latest.set(item.prNumber, { index, at });
  });
  return items.filter(
    (item, index) => !repeated.has(item.prNumber) || latest.get(item.prNumber)?.index === index,
  );
}

/** Reports a stateChangedAt outside 2000-2100. */
export function checkSubmittedPullRequest(
  pr: SubmittedPullRequest,
  report: AnomalyReport,
): SubmittedPullRequest {
  reportOutOfRange([pr.stateChangedAt], report);
  return pr;
}

/** Reports each quarantined_at outside 2000-2100. */
export function checkQuarantinedTestsPage(
  page: QuarantinedTestsPage,
  report: AnomalyReport,
): QuarantinedTestsPage {
  reportOutOfRange(
    page.quarantined_tests.map((test) => test.quarantined_at),
    report,
  );
  return page;
}

function reportOutOfRange(
  timestamps: readonly (string | undefined)[],
  report: AnomalyReport,
): void {
  let count = 0;
  for (const timestamp of timestamps) if (isOutOfExportBounds(timestamp)) count += 1;
  if (count > 0) report('timestamp_out_of_range', count);
}

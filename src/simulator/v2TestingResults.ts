// `GET /v2/merge-queues/{id}/testing-results`: a queue's stretches of testing that ended in a window
// (`since` required, `until` at most 45 days later, by default the time of the first page and the
// same for the whole walk), oldest first. Rows are ordered by end and then by the order they were
// recorded in, and a new one always ends later, so a walk never repeats or skips one.
import { unitHash } from './random.js';
import { isoTimestamp } from './responses.js';
import { TESTING_HISTORY_SECONDS, type TestingAttempt } from './testingHistory.js';
import { validationFailed, type V2Answer } from './v2Errors.js';
import { takePage, type ListPage, type PageRequest, type Query } from './v2Paging.js';
import { readInstant } from './v2Query.js';
import { verificationRunId } from './v2VerificationRuns.js';

/** Query parameters of the list (besides paging). */
export const TESTING_RESULT_FILTERS = ['since', 'until'] as const;

/** Share of results Trunk reports without a classification (no outcome, no conclusion). */
const UNCLASSIFIED_SHARE = 0.02;
/** Share of runs recorded before runs were tracked on results (every row of one without verificationRunId). */
const WITHOUT_RUN_SHARE = 0.05;

export interface TestingResultV2Body {
  readonly pullRequestNumber: number;
  readonly endedAt: string;
  readonly testingDurationMs: number;
  readonly outcome?: TestingAttempt['outcome'];
  readonly entryConclusion?: 'merged' | 'failed' | 'cancelled';
  readonly isBisection: boolean;
  readonly startedBisection: boolean;
  readonly verificationRunId?: string;
}

/** One row: `queueId` names the queue the attempt's run belongs to. */
export function renderTestingResult(queueId: string, attempt: TestingAttempt): TestingResultV2Body {
  const key = `${queueId}:${attempt.sequence}`;
  const classified = unitHash(`testing-result-classified:${key}`) >= UNCLASSIFIED_SHARE;
  const conclusion = attempt.pr.conclusions[attempt.trip]?.state;
  return {
    pullRequestNumber: attempt.pr.number,
    endedAt: isoTimestamp(attempt.endedAt),
    testingDurationMs: (attempt.endedAt - attempt.startedAt) * 1000,
    ...(classified
      ? {
          outcome: attempt.outcome,
          ...(conclusion === undefined ? {} : { entryConclusion: conclusion }),
        }
      : {}),
    isBisection: attempt.isBisection,
    startedBisection: attempt.startedBisection,
    ...(unitHash(`testing-result-run:${queueId}:${String(attempt.batch)}`) < WITHOUT_RUN_SHARE
      ? {}
      : { verificationRunId: verificationRunId(queueId, attempt.batch) }),
  };
}

/** A page of the queue's testing results; `now` is the default `until` of a first page. */
export function listTestingResults(
  queueId: string,
  attempts: readonly TestingAttempt[],
  query: Query,
  page: PageRequest,
  now: number,
): V2Answer<ListPage<TestingResultV2Body>> {
  const since = readInstant(query, 'since');
  if (!since.ok) return since;
  if (since.body === undefined)
    return validationFailed('since is required (an ISO 8601 date-time)');
  const until = readInstant(query, 'until');
  if (!until.ok) return until;
  const pinned = Number(page.pinned.until);
  const end = until.body ?? (Number.isFinite(pinned) ? pinned : now);
  if (since.body > end) {
    return validationFailed(
      `since (${isoTimestamp(since.body)}) is after until (${isoTimestamp(end)})`,
    );
  }
  if (end - since.body > TESTING_HISTORY_SECONDS) {
    return validationFailed(
      `since must be at most 45 days before until (${isoTimestamp(end)}), got ${isoTimestamp(since.body)}`,
    );
  }
  const start = since.body;
  const rows = attempts.filter((attempt) => attempt.endedAt >= start && attempt.endedAt <= end);
  return {
    ok: true,
    body: takePage(
      rows,
      (attempt) => [attempt.endedAt, attempt.sequence],
      page,
      (attempt) => renderTestingResult(queueId, attempt),
      until.body === undefined ? { pin: { until: String(end) } } : {},
    ),
  };
}

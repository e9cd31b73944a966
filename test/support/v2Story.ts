// The fake organization's answers and the page's samples for the API v2 stories
// (test/exporter.v2Story*.test.ts): a clock the test sets, story seconds from T, rows shaped as
// Trunk's definition (`../shared/trunk-openapi-v2/`) shapes them, and the exporter polling it.
import { expect, vi } from 'vitest';
import { select, type Sample } from './exposition.js';
import { configYaml, startTestExporter, type ExporterUnderTest } from './exporterHarness.js';
import type { EntryRow, FakeV2 } from './fakeTrunkV2.js';
import { entryRow, moveEntry, pullRequestIdOf } from './queueEntryRows.js';
import { run } from './verificationRunRows.js';
import { WEB_MAIN } from './webQueueSamples.js';

/** github.com/acme/api main in merge-queues-of-an-organization.json. */
export const API_QUEUE = 'aB3xY9kQ';
export const API_MAIN = { repo: 'github.com/acme/api', branch: 'main' };

/** The story's zero: poll k is at T + 300·k. */
export const T = 1_798_000_200;
export const iso = (at: number) => new Date((T + at) * 1000).toISOString();

export const RUNS = 'trunk_merge_queue_verification_runs_total';
export const IN_PROGRESS = 'trunk_merge_queue_verification_runs_in_progress';
export const DURATION = 'trunk_merge_queue_verification_run_duration_seconds';
export const BATCH = 'trunk_merge_queue_batch_size';
export const CHECKS = 'trunk_merge_queue_check_failures_total';
export const TESTING = 'trunk_merge_queue_testing_duration_seconds';
export const IN_QUEUE = 'trunk_merge_queue_time_in_queue_seconds';
export const IN_STATE = 'trunk_merge_queue_time_in_state_seconds';
export const TRANSITIONS = 'trunk_merge_queue_state_transitions_total';
export const FAILED = 'trunk_merge_queue_pull_requests_failed_total';
export const CANCELLED = 'trunk_merge_queue_pull_requests_cancelled_total';

/** Each series of `name` of `queue`: the values of `labels` joined by `/` → its value. */
export function series(
  samples: readonly Sample[],
  name: string,
  labels: readonly string[],
  queue: Record<string, string> = WEB_MAIN,
) {
  return Object.fromEntries(
    select(samples, name, queue).map((sample): [string, number] => [
      labels.map((key) => sample.labels[key] ?? '').join('/'),
      sample.value,
    ]),
  );
}

/**
 * A histogram's series of `queue` by the values of `labels` joined by `/`: its bucket counts in
 * the page's order (each bound ascending, `+Inf` last), `sum` and `count`.
 */
export function histogram(
  samples: readonly Sample[],
  name: string,
  labels: readonly string[],
  queue: Record<string, string> = WEB_MAIN,
) {
  const key = (sample: Sample) => labels.map((label) => sample.labels[label] ?? '').join('/');
  const out: Record<string, { buckets: number[]; sum: number; count: number }> = {};
  for (const sample of select(samples, `${name}_bucket`, queue)) {
    (out[key(sample)] ??= { buckets: [], sum: Number.NaN, count: Number.NaN }).buckets.push(
      sample.value,
    );
  }
  for (const sample of select(samples, `${name}_sum`, queue)) {
    const series = out[key(sample)];
    if (series !== undefined) series.sum = sample.value;
  }
  for (const sample of select(samples, `${name}_count`, queue)) {
    const series = out[key(sample)];
    if (series !== undefined) series.count = sample.value;
  }
  return out;
}

/** A histogram series with nothing observed: `bounds` buckets and `+Inf` at 0. */
export const empty = (bounds: number) => ({
  buckets: Array<number>(bounds + 1).fill(0),
  sum: 0,
  count: 0,
});

/** One step of a timeline (`QueueEntryStateTransition`), at story second `at`. */
export function step(
  fake: FakeV2,
  number: number,
  state: string,
  at: number,
  reason: string | null,
) {
  fake.history(pullRequestIdOf(number)).push({ state, changedAt: iso(at), reason });
}

/** A testing result (`TestingResult`) of PR `number` on run `runId`, from `from` to `to`. */
export function result(
  number: number,
  runId: string,
  from: number,
  to: number,
  outcome: string,
  more: { isBisection?: boolean; startedBisection?: boolean; entryConclusion?: string } = {},
) {
  return {
    pullRequestNumber: number,
    endedAt: iso(to),
    testingDurationMs: (to - from) * 1000,
    outcome,
    ...(more.entryConclusion === undefined ? {} : { entryConclusion: more.entryConclusion }),
    isBisection: more.isBisection ?? false,
    startedBisection: more.startedBisection ?? false,
    verificationRunId: runId,
  };
}

/** Run `id` (`VerificationRun`), created at `from`, last changed at `to`. */
export function runRow(
  id: string,
  status: string,
  from: number,
  to: number,
  tested: number[],
  more: { isBisection?: boolean; checks?: unknown[]; requiredStatuses?: string[] } = {},
) {
  return run({
    id,
    status,
    isBisection: more.isBisection ?? false,
    createdAt: T + from,
    updatedAt: T + to,
    tested,
    checks: more.checks ?? [],
    requiredStatuses: more.requiredStatuses ?? ['ci/build'],
  });
}

/** PR `number`'s row, in `state` since `at`, first submitted at `submittedAt`. */
export function prRow(number: number, state: string, at: number, submittedAt: number): EntryRow {
  const row = entryRow(number, state, T + at);
  (row.queueEntry as Record<string, unknown>).createdAt = iso(submittedAt);
  return row;
}

/** Moves `row`'s entry to `state` at story second `at`, as Trunk's list shows it from then on. */
export function move(row: EntryRow, state: string, at: number) {
  moveEntry(row, state, T + at);
  (row.queueEntry as Record<string, unknown>).updatedAt = iso(at);
}

/** Puts run `row` in queue `queueId`'s list, in place of the run of its id (Trunk updating it). */
export function setRun(fake: FakeV2, queueId: string, row: Record<string, unknown>): void {
  const runs = fake.verificationRuns(queueId) as unknown[];
  const at = runs.findIndex((other) => (other as { id?: unknown }).id === row.id);
  if (at === -1) runs.push(row);
  else runs.splice(at, 1, row);
}

/** Each of the host's documented reasons at 0 (`trunk_merge_queue_pull_requests_not_mergeable`). */
export const NO_MERGEABILITY_REASON = {
  conflict: 0,
  behind: 0,
  draft: 0,
  closed: 0,
  pending: 0,
  awaiting_check: 0,
  failing_check: 0,
  review_required: 0,
  changes_requested: 0,
  stack_needs_rebase: 0,
  other: 0,
};

/**
 * A real exporter holding only an API key, polling `targets` of `fake` every 0.2 s (real time;
 * the story's clock moves only when the test sets it), and a function that sets the clock to a
 * story second and waits for the polls of `queueIds` after it.
 */
export async function storyExporter(fake: FakeV2, targets: string, queueIds: readonly string[]) {
  const exporter = await startTestExporter(
    configYaml({
      apiUrl: fake.origin,
      token: null,
      apiKey: 'trunk_v2_story-key',
      targets,
      polling: [
        '  mergeQueueIntervalSeconds: 0.2',
        '  flakyTestsIntervalSeconds: 600',
        '  staleAfterSeconds: 3600',
      ].join('\n'),
    }),
  );
  return { exporter, pollsAt: pollWaiter(fake, exporter, queueIds) };
}

/** A queue's exits: each outcome at 0 unless `counts` says otherwise. */
export function expectExits(
  samples: readonly Sample[],
  counts: Partial<Record<'merged' | 'failed' | 'cancelled' | 'unknown', number>>,
  queue: Record<string, string> = WEB_MAIN,
): void {
  expect(
    series(samples, 'trunk_merge_queue_pull_requests_exited_total', ['outcome'], queue),
  ).toEqual({ merged: 0, failed: 0, cancelled: 0, unknown: 0, ...counts });
}

/**
 * Sets the clock to story second `at` and waits for `polls` polls of each of `queueIds` to begin
 * after it (four by default: the first sees the change, its history read is started after it, a
 * later poll takes it).
 */
function pollWaiter(fake: FakeV2, exporter: ExporterUnderTest, queueIds: readonly string[]) {
  const liveReads = (queueId: string) =>
    fake
      .requestsTo(new RegExp(`^/v2/merge-queues/${queueId}/pull-requests$`))
      .filter((request) => request.url.includes('state=notReady')).length;
  return async (at: number, polls = 4) => {
    vi.setSystemTime((T + at) * 1000);
    const before = queueIds.map(liveReads);
    while (queueIds.some((queueId, index) => liveReads(queueId) < (before[index] ?? 0) + polls)) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await exporter.samples();
  };
}

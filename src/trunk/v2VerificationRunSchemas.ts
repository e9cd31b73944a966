import { z } from 'zod';
import { LabelTextCuts, isUnfitName, nameLabel } from './labelText.js';
import { checkV2Page, type AnomalyReport } from './responseAnomalies.js';
import { exportableSeconds } from './timestamps.js';
import {
  UNUSABLE_ITEM,
  optionalValue,
  pullRequestNumber,
  tolerantList,
} from './tolerantSchemas.js';
import { v2PageSchema, v2PathIdSchema, type V2Page, type V2PageResponse } from './v2Schemas.js';

// `GET /v2/merge-queues/{id}/verification-runs` (`VerificationRun`): only what the run families
// and the read's watermark use is required. Status and check conclusions are plain strings, as
// Trunk may add members; a check's other fields and the run's PR ids, shas and titles are not read.

/** The run statuses Trunk documents (`VerificationRunStatus`); `inProgress` is the only open one. */
export const V2_RUN_STATUSES = ['inProgress', 'failed', 'cancelled', 'succeeded'] as const;

/** The check conclusions Trunk documents (`CheckConclusion`). */
export const V2_CHECK_CONCLUSIONS = [
  'success',
  'failure',
  'neutral',
  'cancelled',
  'skipped',
  'timeout',
] as const;

/**
 * Pages one read of a queue's verification runs may take: a read reaches back a day at most, and
 * a busy queue makes a few thousand runs a day (the flow remembers 5,000). A read that fails is
 * made again at the next poll, so a cursor that never ends costs this many calls a poll, not 1,000.
 */
export const V2_MAX_RUN_PAGES = 50;

/** The status of a run whose checks are still running. */
export const V2_RUN_IN_PROGRESS = 'inProgress';

const v2CheckSchema = z.object({
  name: z.string(),
  // "`neutral` is also the placeholder for a check that has not concluded yet."
  conclusion: optionalValue(z.string()),
});

export const v2VerificationRunSchema = z.object({
  id: v2PathIdSchema,
  isBisection: z.boolean(),
  // Not optional: the read places each run by it (an unparseable one is counted, not the run).
  createdAt: z.string(),
  updatedAt: z.string(),
  status: z.string(),
  requiredStatuses: z.array(z.string()),
  checks: z.array(v2CheckSchema),
  // Each entry parsed alone: one without a usable number is Trunk's error in that entry, and the
  // run's other facts still hold.
  testedPullRequests: tolerantList(z.object({ number: pullRequestNumber })),
});
/** A run as parsed: its unusable tested pull requests still in place (checkVerificationRunsPage). */
export type V2VerificationRunResponse = z.infer<typeof v2VerificationRunSchema>;
export const v2VerificationRunPageSchema = v2PageSchema(v2VerificationRunSchema);

/** A run as the exporter reads it. */
export interface V2VerificationRun extends Omit<V2VerificationRunResponse, 'testedPullRequests'> {
  /** The tested pull requests with a usable number, in Trunk's order. */
  readonly testedPullRequests: readonly { readonly number: number }[];
  /** The tested pull requests Trunk listed without a usable number: left out above, still tested. */
  readonly unnumberedPullRequests: number;
}

const KNOWN_STATUSES: ReadonlySet<string> = new Set(V2_RUN_STATUSES);
const KNOWN_CONCLUSIONS: ReadonlySet<string> = new Set(V2_CHECK_CONCLUSIONS);
const checkRunRows = checkV2Page<V2VerificationRunResponse>((run) => [
  run.createdAt,
  run.updatedAt,
]);

/**
 * Checks a page of verification runs as every v2 page (unusable rows, both timestamps), and reports
 * each status and check conclusion outside Trunk's documented ones as `unknown_value` (its run
 * counts as `unknown`; its check as no failure), and each check name too long for a label value as
 * `invalid_field` (cut, in `checks` and `requiredStatuses` alike, so the two still match; an empty
 * name, which the definition allows, is named `unknown` alike and not reported), as is
 * each run updated before it was created (its duration counts as 0) and each tested pull request
 * without a usable number (left out of the run's, which is kept).
 */
export function checkVerificationRunsPage(
  response: V2PageResponse<V2VerificationRunResponse>,
  report: AnomalyReport,
): V2Page<V2VerificationRun> {
  const page = checkRunRows(response, report);
  let unknown = 0;
  let updatedBeforeCreated = 0;
  let unnumbered = 0;
  const cuts = new LabelTextCuts();
  const data = page.data.map((row): V2VerificationRun => {
    const testedPullRequests = row.testedPullRequests.filter((pr) => pr !== UNUSABLE_ITEM);
    const unnumberedPullRequests = row.testedPullRequests.length - testedPullRequests.length;
    unnumbered += unnumberedPullRequests;
    const run = { ...row, testedPullRequests, unnumberedPullRequests };
    if (!KNOWN_STATUSES.has(run.status)) unknown += 1;
    // "When the run last changed" cannot come before "When the run was created".
    if ((exportableSeconds(run.updatedAt) ?? Infinity) < (exportableSeconds(run.createdAt) ?? 0)) {
      updatedBeforeCreated += 1;
    }
    for (const { conclusion } of run.checks) {
      if (conclusion !== undefined && !KNOWN_CONCLUSIONS.has(conclusion)) unknown += 1;
    }
    if (!run.checks.some(({ name }) => isUnfitName(name))) return run;
    return {
      ...run,
      // Named alike, so that a cut or empty check stays required; each cut counted once, in `checks`.
      requiredStatuses: run.requiredStatuses.map(nameLabel),
      checks: run.checks.map((check) => ({ ...check, name: cuts.name(check.name) })),
    };
  });
  if (unknown > 0) report('unknown_value', unknown);
  if (cuts.count + updatedBeforeCreated + unnumbered > 0) {
    report('invalid_field', cuts.count + updatedBeforeCreated + unnumbered);
  }
  return { ...page, data };
}

/**
 * Checks one run read by id (`GET /v2/merge-queue-verification-runs/{id}`, a bare
 * `VerificationRun`) as a row of a page of runs: the same anomalies reported, the same names cut.
 */
export function checkVerificationRun(
  run: V2VerificationRunResponse,
  report: AnomalyReport,
): V2VerificationRun {
  const [checked] = checkVerificationRunsPage({ data: [run] }, report).data;
  // Unreachable: a run the schema parsed is never an unusable row of its page of one.
  if (checked === undefined) throw new TypeError('a parsed verification run was left out');
  return checked;
}

// A verification run's checks as v2 shows them (`Check`): provider check runs and commit statuses
// normalized to one shape, with the provider's own words beside the normalized ones. The required
// checks that failed a run come from the run; the other checks follow from its status, and each
// check's id, kind, link and whether an optional one failed are pure functions of the run and name.
import { STATUS_NAMES } from './queueSettings.js';
import { unitHash } from './random.js';
import type { SimulatedRepository } from './repositories.js';
import { repositoryUrl } from './v2Responses.js';
import type { CheckConclusion, VerificationRun } from './verificationRuns.js';

/** The checks every run reports: those a queue may require, and a coverage status it never does. */
const CHECK_NAMES: readonly string[] = [...STATUS_NAMES, 'codecov/patch'];

/** Share of commit-status checks whose CI left no link. */
const STATUS_CHECK_WITHOUT_URL = 0.1;
/** Share of in-progress checks still queued rather than running. */
const QUEUED_CHECKS = 0.2;
/** Share of failed commit statuses their CI reported as an error rather than a failure. */
const STATUS_ERRORS = 0.2;
/** Shares of the conclusions of optional checks: they fail now and then without failing the run. */
const OPTIONAL_FAILURE = 0.08;
const OPTIONAL_SKIPPED = 0.05;
/** Share of required checks of an abandoned run that had passed before it was cancelled. */
const PASSED_BEFORE_CANCELLED = 0.4;

export interface CheckV2Body {
  readonly id: string;
  readonly name: string;
  readonly kind: 'checkRun' | 'statusCheck';
  readonly status: 'queued' | 'inProgress' | 'completed';
  readonly conclusion: CheckConclusion | 'neutral';
  readonly providerStatus?: 'QUEUED' | 'IN_PROGRESS' | 'COMPLETED';
  readonly providerConclusion?: string;
  readonly url: string | null;
  readonly provider: 'github';
}

/** GitHub's word for a check run's conclusion. */
const CHECK_RUN_CONCLUSIONS: Readonly<Record<CheckConclusion, string>> = {
  success: 'SUCCESS',
  failure: 'FAILURE',
  timeout: 'TIMED_OUT',
  cancelled: 'CANCELLED',
  skipped: 'SKIPPED',
};

/**
 * One check of a run. Names with a slash are commit statuses (`ci/build`), the others check runs:
 * a commit status has no lifecycle, and a hung or abandoned one stays `PENDING`.
 */
export function renderCheck(
  repository: SimulatedRepository,
  runId: string,
  name: string,
  conclusion: CheckConclusion | undefined,
): CheckV2Body {
  const key = `${runId}:${name}`;
  const id = String(1_000_000_000 + Math.floor(unitHash(`check-id:${key}`) * 8_999_999_999));
  const kind = name.includes('/') ? 'statusCheck' : 'checkRun';
  const url =
    kind === 'checkRun'
      ? `${repositoryUrl(repository)}/runs/${id}`
      : unitHash(`check-url:${key}`) < STATUS_CHECK_WITHOUT_URL
        ? null
        : `https://ci.${repository.owner}.dev/builds/${id}`;
  const common = { id, name, kind, url, provider: 'github' } as const;
  if (conclusion === undefined) {
    const queued = unitHash(`check-queued:${key}`) < QUEUED_CHECKS;
    return kind === 'checkRun'
      ? {
          ...common,
          status: queued ? 'queued' : 'inProgress',
          conclusion: 'neutral',
          providerStatus: queued ? 'QUEUED' : 'IN_PROGRESS',
        }
      : { ...common, status: 'inProgress', conclusion: 'neutral', providerConclusion: 'PENDING' };
  }
  if (kind === 'checkRun') {
    const providerConclusion = CHECK_RUN_CONCLUSIONS[conclusion];
    return {
      ...common,
      status: 'completed',
      conclusion,
      providerStatus: 'COMPLETED',
      providerConclusion,
    };
  }
  const providerConclusion =
    conclusion === 'success'
      ? 'SUCCESS'
      : conclusion === 'failure'
        ? unitHash(`check-error:${key}`) < STATUS_ERRORS
          ? 'ERROR'
          : 'FAILURE'
        : conclusion === 'skipped'
          ? undefined
          : 'PENDING';
  return {
    ...common,
    status: 'completed',
    conclusion,
    ...(providerConclusion === undefined ? {} : { providerConclusion }),
  };
}

/**
 * What `name` concluded on `run` (whose id is `runId`): the failure it failed the run with, or what
 * the run's status says of the others; undefined while the run is in progress.
 */
function conclusionOf(
  run: VerificationRun,
  runId: string,
  name: string,
): CheckConclusion | undefined {
  const failing = run.failing.find((check) => check.name === name);
  if (failing !== undefined) return failing.conclusion;
  const required = run.requiredStatuses.includes(name);
  const roll = unitHash(`check-conclusion:${runId}:${name}`);
  switch (run.status) {
    case 'inProgress':
      return undefined;
    case 'cancelled':
      return required && roll < PASSED_BEFORE_CANCELLED ? 'success' : 'cancelled';
    case 'succeeded':
    case 'failed':
      if (required) return 'success';
      return roll < OPTIONAL_FAILURE
        ? 'failure'
        : roll < OPTIONAL_FAILURE + OPTIONAL_SKIPPED
          ? 'skipped'
          : 'success';
  }
}

/** Every check of `run` (whose id is `runId`): its required ones first, then the optional ones. */
export function renderChecks(
  repository: SimulatedRepository,
  runId: string,
  run: VerificationRun,
): CheckV2Body[] {
  const optional = CHECK_NAMES.filter((name) => !run.requiredStatuses.includes(name));
  return [...run.requiredStatuses, ...optional].map((name) =>
    renderCheck(repository, runId, name, conclusionOf(run, runId, name)),
  );
}

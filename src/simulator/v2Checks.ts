// A verification run's checks as v2 shows them (`Check`): provider check runs and commit statuses
// normalized to one shape, with the provider's own words beside the normalized ones. What a check
// concluded comes from the run; its id, kind and link are pure functions of the run and its name.
import { unitHash } from './random.js';
import type { SimulatedRepository } from './repositories.js';
import { repositoryUrl } from './v2Responses.js';
import type { CheckConclusion, CheckOutcome } from './verificationRuns.js';

/** Share of commit-status checks whose CI left no link. */
const STATUS_CHECK_WITHOUT_URL = 0.1;
/** Share of in-progress checks still queued rather than running. */
const QUEUED_CHECKS = 0.2;
/** Share of failed commit statuses their CI reported as an error rather than a failure. */
const STATUS_ERRORS = 0.2;

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
  outcome: CheckOutcome | undefined,
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
  if (outcome === undefined) {
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
  const { conclusion } = outcome;
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

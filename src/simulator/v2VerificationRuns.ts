// v2's verification runs (`VerificationRun`) rendered from the queue model's runs, and the three
// reads of them: a queue's runs (`createdAfter` strictly after, one `status`), a pull request's
// runs, one run by id. Both lists are newest first, keyed by creation time and order, so a walk
// neither skips nor repeats a run while new ones start (they sort before the cursor).
import type { MergeQueueModel } from './mergeQueueModel.js';
import type { SimulatedPullRequest } from './pullRequest.js';
import { stableUuid } from './random.js';
import type { SimulatedRepository } from './repositories.js';
import { isoTimestamp } from './responses.js';
import { notFound, validationFailed, type V2Answer } from './v2Errors.js';
import { takePage, type ListPage, type PageRequest, type Query, type SortKey } from './v2Paging.js';
import { isUuid, readEnum, readInstant } from './v2Query.js';
import { repositoryUrl, syncedHtmlUrl } from './v2Responses.js';
import { renderChecks, type CheckV2Body } from './v2Checks.js';
import type { RunStatus, VerificationRun } from './verificationRuns.js';

/** A queue of the v2 view: its id, repository and model. */
export interface ViewedQueue {
  readonly id: string;
  readonly repository: SimulatedRepository;
  readonly model: MergeQueueModel;
}

/** Query parameters of the runs lists (besides paging); a pull request's list refuses `createdAfter`. */
export const VERIFICATION_RUN_FILTERS = ['status', 'createdAfter', 'sort', 'direction'] as const;

const RUN_STATUSES: readonly RunStatus[] = ['inProgress', 'failed', 'cancelled', 'succeeded'];

/** The first number of the draft pull requests the queue opens for its test branches. */
const DRAFT_PULL_REQUESTS_FROM = 100_000;

export interface PullRequestRefV2Body {
  readonly id: string;
  readonly number: number;
  readonly sha: string;
  readonly title: string;
  readonly url?: string;
}

export interface VerificationRunV2Body {
  readonly id: string;
  readonly isBisection: boolean;
  readonly testBranch: string;
  readonly testBranchSha: string;
  readonly testBranchCommitUrl?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly status: RunStatus;
  readonly requiredStatusesSource: 'mergeInstance';
  readonly requiredStatuses: readonly string[];
  readonly checks: readonly CheckV2Body[];
  readonly testedPullRequests: readonly PullRequestRefV2Body[];
  readonly dependentPullRequests: readonly PullRequestRefV2Body[];
  readonly testBranchPullRequest?: { readonly number: number; readonly url: string };
}

/** The id of the run of `batch` in queue `queueId`: what its testing results name too. */
export function verificationRunId(queueId: string, batch: number): string {
  return stableUuid(`verification-run:${queueId}:${batch}`);
}

/** A 40-digit hex sha that is a pure function of `name`. */
function shaOf(name: string): string {
  return `${stableUuid(`${name}:1`)}${stableUuid(`${name}:2`)}`.replace(/-/g, '').slice(0, 40);
}

/** A pull request as a run lists it. */
function pullRequestRef(
  repository: SimulatedRepository,
  pr: SimulatedPullRequest,
): PullRequestRefV2Body {
  return {
    id: pr.id,
    number: pr.number,
    sha: pr.sha,
    title: pr.title,
    ...syncedHtmlUrl(repository, pr),
  };
}

/** One run of `queue` as the definition's `VerificationRun`. */
export function renderVerificationRun(
  queue: ViewedQueue,
  run: VerificationRun,
): VerificationRunV2Body {
  const { repository, model } = queue;
  const id = verificationRunId(queue.id, run.batch);
  const sha = shaOf(`test-branch:${id}`);
  const tag = Math.abs(run.batch).toString(36).padStart(4, '0');
  const onGitHub = repository.host.includes('github');
  const repositoryPage = repositoryUrl(repository);
  // The queue's draft pull request for the test branch, numbered far past the repository's own.
  const draft = DRAFT_PULL_REQUESTS_FROM + Math.abs(run.batch);
  return {
    id,
    isBisection: run.isBisection,
    testBranch: `trunk-merge/${model.branch}/${run.batch < 0 ? 'x' : ''}${tag}`,
    testBranchSha: sha,
    ...(onGitHub ? { testBranchCommitUrl: `${repositoryPage}/commit/${sha}` } : {}),
    createdAt: isoTimestamp(run.createdAt),
    updatedAt: isoTimestamp(run.updatedAt),
    status: run.status,
    requiredStatusesSource: 'mergeInstance',
    requiredStatuses: [...run.requiredStatuses],
    checks: renderChecks(repository, id, run),
    testedPullRequests: run.tested.map((pr) => pullRequestRef(repository, pr)),
    dependentPullRequests: run.dependent.map((pr) => pullRequestRef(repository, pr)),
    ...(model.settings.createPrsForTestingBranches
      ? { testBranchPullRequest: { number: draft, url: `${repositoryPage}/pull/${draft}` } }
      : {}),
  };
}

/** What both lists take: one status, and the only order there is (`sort`, `direction`). */
function readRunQuery(query: Query): V2Answer<RunStatus | undefined> {
  const sort = readEnum(query, 'sort', ['createdAt']);
  if (!sort.ok) return validationFailed(`sort is not configurable yet: ${sort.message}`);
  const direction = readEnum(query, 'direction', ['desc']);
  if (!direction.ok) {
    return validationFailed(`direction is not configurable yet: ${direction.message}`);
  }
  return readEnum(query, 'status', RUN_STATUSES);
}

const newestFirst = (run: VerificationRun): SortKey => [-run.createdAt, -run.sequence];

/** A page of `runs` of `queue`, newest first. */
function pageOfRuns(
  queue: ViewedQueue,
  runs: readonly VerificationRun[],
  page: PageRequest,
): ListPage<VerificationRunV2Body> {
  const rows = [...runs].sort((a, b) => b.createdAt - a.createdAt || b.sequence - a.sequence);
  return takePage(rows, newestFirst, page, (run) => renderVerificationRun(queue, run));
}

/** `GET /v2/merge-queues/{id}/verification-runs`. */
export function listQueueVerificationRuns(
  queue: ViewedQueue,
  query: Query,
  page: PageRequest,
): V2Answer<ListPage<VerificationRunV2Body>> {
  const status = readRunQuery(query);
  if (!status.ok) return status;
  const createdAfter = readInstant(query, 'createdAfter');
  if (!createdAfter.ok) return createdAfter;
  const after = createdAfter.body ?? -Infinity;
  const runs = queue.model.verificationRuns.runs.filter(
    (run) => run.createdAt > after && (status.body === undefined || run.status === status.body),
  );
  return { ok: true, body: pageOfRuns(queue, runs, page) };
}

/** `GET /v2/pull-requests/{id}/verification-runs`: every run that tested `pr`. */
export function listPullRequestVerificationRuns(
  queue: ViewedQueue,
  pr: SimulatedPullRequest,
  query: Query,
  page: PageRequest,
): V2Answer<ListPage<VerificationRunV2Body>> {
  if (query.has('createdAfter')) {
    return validationFailed(
      "createdAfter is not served on a pull request's verification runs; the queue's list serves it",
    );
  }
  const status = readRunQuery(query);
  if (!status.ok) return status;
  const runs = queue.model.verificationRuns.runs.filter(
    (run) => run.tested.includes(pr) && (status.body === undefined || run.status === status.body),
  );
  return { ok: true, body: pageOfRuns(queue, runs, page) };
}

/** `GET /v2/merge-queue-verification-runs/{id}`, among the runs of `queues`. */
export function getVerificationRun(
  queues: Iterable<ViewedQueue>,
  id: string,
): V2Answer<VerificationRunV2Body> {
  if (isUuid(id)) {
    const wanted = id.toLowerCase();
    for (const queue of queues) {
      const run = queue.model.verificationRuns.runs.find(
        (candidate) => verificationRunId(queue.id, candidate.batch) === wanted,
      );
      if (run !== undefined) return { ok: true, body: renderVerificationRun(queue, run) };
    }
  }
  return notFound('VERIFICATION_RUN_NOT_FOUND', `verification run ${id} not found`);
}

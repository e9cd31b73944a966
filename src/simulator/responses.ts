// Response bodies as they go on the wire, in the two shapes the simulator can speak: exactly the
// interface document (`documented`) or with the live service's extra behaviour (`live`,
// trunk-api-notes.md "Extra fields the real responses carry").
import type { MergeQueueModel, MergeQueueSettings, QueueState } from './mergeQueueModel.js';
import {
  DEFAULT_PRIORITY_NAME,
  isFinalState,
  PRIORITY_VALUES,
  type HostMergeability,
  type PullRequestState,
  type SimulatedPullRequest,
} from './pullRequest.js';
import type {
  QuarantineSetting,
  QuarantineStatus,
  SimulatedQuarantinedTest,
} from './quarantineModel.js';

/** Which response shape the simulator speaks. */
export type SimulatorFlavour = 'documented' | 'live';

/** The pull request's own fields, alike in 2.6 and 2.7. */
interface PullRequestIdentityBody {
  readonly prNumber: number;
  readonly prTitle: string;
  readonly prSha: string;
  readonly prBaseBranch: string;
  readonly prAuthor: string;
  readonly id: string;
}

/** trunk-api-v1.md 2.6, plus `state` in the live flavour. */
export interface EnqueuedPullRequestBody extends PullRequestIdentityBody {
  readonly stateChangedAt: string;
  readonly priorityValue: number;
  readonly priorityName: string;
  readonly skipTheLine: boolean;
  readonly noBatch: boolean;
  readonly usedDefaultPriorityName?: string;
  readonly state?: PullRequestState;
}

/** trunk-api-v1.md 2.5. */
export interface MergeQueueBody extends Omit<MergeQueueSettings, 'requiredStatuses'> {
  readonly state: QueueState;
  readonly branch: string;
  readonly requiredStatuses: string[];
  readonly enqueuedPullRequests: EnqueuedPullRequestBody[];
}

/** Readiness of 2.7: `hostMergeability` in the documented flavour, `gitHubMergeability` live. */
export interface ReadinessBody {
  readonly requiresImpactedTargets: boolean;
  readonly doesBaseBranchMatch: boolean;
  readonly hasImpactedTargets: boolean;
  readonly hostMergeability?: 'mergeable' | 'not_mergeable';
  readonly gitHubMergeability?: HostMergeability;
}

/** trunk-api-v1.md 2.7. */
export interface SubmittedPullRequestBody extends PullRequestIdentityBody {
  readonly stateChangedAt: string;
  readonly priorityValue: number;
  readonly priorityName: string;
  readonly skipTheLine: boolean;
  readonly forceEnqueued: boolean;
  readonly isCurrentlySubmittedToQueue: boolean;
  readonly state: PullRequestState;
  readonly readiness: ReadinessBody;
  readonly usedDefaultPriorityName?: string;
}

/** trunk-api-v1.md 2.3; live: nullable parent/file/classname, plus status and setting. */
export interface QuarantinedTestBody {
  readonly name: string;
  readonly parent: string | null;
  readonly file: string | null;
  readonly classname: string | null;
  readonly codeowners: string[];
  readonly quarantined_at: string;
  readonly status_last_updated_at: string;
  readonly test_case_id: string;
  readonly variant: string;
  readonly status?: QuarantineStatus;
  readonly quarantine_setting?: QuarantineSetting;
}

/** trunk-api-v1.md 2.4. */
export interface PageBody {
  readonly total_rows: number;
  readonly total_pages: number;
  readonly next_page_token: string;
  readonly prev_page_token: string;
  readonly last_page_token: string;
  readonly page_index: number;
}

/** Response of list-quarantined-tests (4.1). */
export interface QuarantinedTestsPageBody {
  readonly quarantined_tests: QuarantinedTestBody[];
  readonly page: PageBody;
}

/** Unix seconds as ISO 8601 with a `Z` designator. */
export function isoTimestamp(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

function priorityFields(pr: SimulatedPullRequest) {
  return {
    priorityValue: PRIORITY_VALUES[pr.priorityName],
    priorityName: pr.priorityName,
    ...(pr.usedDefaultPriority ? { usedDefaultPriorityName: DEFAULT_PRIORITY_NAME } : {}),
  };
}

function identityFields(pr: SimulatedPullRequest): PullRequestIdentityBody {
  return {
    prNumber: pr.number,
    prTitle: pr.title,
    prSha: pr.sha,
    prBaseBranch: pr.baseBranch,
    prAuthor: pr.author,
    id: pr.id,
  };
}

function renderEnqueuedPullRequest(
  pr: SimulatedPullRequest,
  flavour: SimulatorFlavour,
): EnqueuedPullRequestBody {
  return {
    stateChangedAt: isoTimestamp(pr.stateChangedAt),
    ...priorityFields(pr),
    skipTheLine: pr.skipTheLine,
    noBatch: pr.noBatch,
    ...identityFields(pr),
    ...(flavour === 'live' ? { state: pr.state } : {}),
  };
}

/** The getQueue response for a queue as it is now. */
export function renderMergeQueue(
  queue: MergeQueueModel,
  flavour: SimulatorFlavour,
): MergeQueueBody {
  return {
    state: queue.state,
    branch: queue.branch,
    ...queue.settings,
    requiredStatuses: [...queue.settings.requiredStatuses],
    enqueuedPullRequests: queue.active.map((pr) => renderEnqueuedPullRequest(pr, flavour)),
  };
}

/** The getSubmittedPullRequest response for a pull request, in the queue or recently finished. */
export function renderSubmittedPullRequest(
  pr: SimulatedPullRequest,
  flavour: SimulatorFlavour,
): SubmittedPullRequestBody {
  const r = pr.readiness;
  const mergeability: Pick<ReadinessBody, 'hostMergeability' | 'gitHubMergeability'> =
    flavour === 'live'
      ? { gitHubMergeability: r.mergeability }
      : { hostMergeability: r.mergeability === 'mergeable' ? 'mergeable' : 'not_mergeable' };
  return {
    stateChangedAt: isoTimestamp(pr.stateChangedAt),
    ...priorityFields(pr),
    skipTheLine: pr.skipTheLine,
    forceEnqueued: pr.forceEnqueued,
    isCurrentlySubmittedToQueue: !isFinalState(pr.state),
    ...identityFields(pr),
    state: pr.state,
    readiness: {
      requiresImpactedTargets: r.requiresImpactedTargets,
      doesBaseBranchMatch: r.doesBaseBranchMatch,
      hasImpactedTargets: r.hasImpactedTargets,
      ...mergeability,
    },
  };
}

/** One quarantine list item; the documented flavour has only strings and no extra fields. */
export function renderQuarantinedTest(
  test: SimulatedQuarantinedTest,
  flavour: SimulatorFlavour,
): QuarantinedTestBody {
  const common = {
    name: test.name,
    codeowners: [...test.codeowners],
    quarantined_at: isoTimestamp(test.quarantinedAt),
    status_last_updated_at: isoTimestamp(test.statusLastUpdatedAt),
    test_case_id: test.testCaseId,
    variant: test.variant,
  };
  if (flavour === 'documented') {
    return {
      ...common,
      parent: test.parent ?? '',
      file: test.file ?? '',
      classname: test.classname ?? '',
    };
  }
  return {
    ...common,
    parent: test.parent,
    file: test.file,
    classname: test.classname,
    status: test.status,
    quarantine_setting: test.setting,
  };
}

// v2 response bodies (trunk-api-v2.md) rendered from the same models v1 renders: camelCase fields
// and enum values, ids instead of repository and branch names.
import type { MergeQueueModel } from './mergeQueueModel.js';
import {
  isFinalState,
  PRIORITY_VALUES,
  type PriorityName,
  type SimulatedPullRequest,
} from './pullRequest.js';
import type { SimulatedQuarantinedTest } from './quarantineModel.js';
import type { SimulatedRepository } from './repositories.js';
import { isoTimestamp } from './responses.js';
import { mergeabilityReasons, type MergeabilityReason } from './v2Mergeability.js';

/** `not_ready` → `notReady`: v2 spells v1's snake_case enum values in camelCase. */
export function camelCase(value: string): string {
  return value.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

export type V2Mergeability = 'mergeable' | 'notMergeable' | 'inProgress' | 'unspecified';

/** Facts of a queue that v1 does not show, drawn once per queue (v2View.ts). */
export interface V2QueueFacts {
  readonly id: string;
  readonly repositoryId: string;
  readonly createdAt: number;
  readonly managedState: 'manual' | 'terraform' | 'terraformWithDrift';
  readonly notReadyTimeoutMinutes: number;
  readonly isExtensionEnabled: boolean;
  readonly areLabelCommandsEnabled: boolean;
  readonly areStateLabelsEnabled: boolean;
  readonly allowedBotSubmitters: readonly string[];
}

export interface MergeQueueV2Body {
  readonly id: string;
  readonly repositoryId: string;
  readonly repositoryUrl: string;
  readonly targetBranch: string;
  readonly state: string;
  readonly mode: 'queue' | 'graph';
  readonly managedState: V2QueueFacts['managedState'];
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly pullRequestsUrl: string;
  readonly config: Readonly<Record<string, unknown>>;
}

export interface QueueEntryV2Body {
  readonly id: string;
  readonly mergeQueueId: string;
  readonly state: string;
  readonly stateChangedAt: string;
  readonly skipsTheLine: boolean;
  readonly allowBatching: boolean;
  readonly direct: boolean;
  readonly readiness: {
    readonly requiresImpactedTargets: boolean;
    readonly doesBaseBranchMatch: boolean;
    readonly mergeability: V2Mergeability;
    readonly mergeabilityDetails?: {
      readonly provider: 'github';
      readonly reasons: readonly MergeabilityReason[];
    };
  };
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly priorityValue: number;
  readonly priorityName: PriorityName;
}

export interface PullRequestV2Body {
  readonly id: string;
  readonly repositoryId: string;
  readonly number: number;
  readonly title: string;
  readonly branch: string;
  readonly sha: string;
  readonly baseBranch: string;
  readonly author: string;
  readonly isCurrentlySubmittedToQueue: boolean;
  readonly createdAt: string;
  readonly url: string;
  readonly htmlUrl: string;
  readonly state: 'open' | 'closed' | 'merged';
  readonly queueEntry: QueueEntryV2Body;
}

export interface TestV2Body {
  readonly id: string;
  readonly testCollectionId: string;
  readonly repoId: string;
  readonly name: string;
  readonly parentName: string | null;
  readonly className: string | null;
  readonly file: string | null;
  readonly variant: string;
  readonly codeowners: string[];
  readonly status: 'healthy' | 'flaky' | 'broken';
  readonly statusSince: string;
  readonly quarantineState: 'quarantined';
  readonly quarantinedSince: string;
  readonly labels: string[];
  readonly url: string;
}

export interface RepositoryV2Body {
  readonly id: string;
  readonly provider: 'github' | 'gitlab' | 'bitbucket' | 'unknown';
  readonly path: string;
  readonly host: string;
  readonly url: string;
  readonly defaultBranch: string;
}

export interface TestCollectionV2Body {
  readonly id: string;
  readonly name: string;
  readonly repoId: string;
}

/** `https://github.com/acme/web`: v2's repositoryUrl, also the repository's `url`. */
export function repositoryUrl(repository: SimulatedRepository): string {
  return `https://${repository.host}/${repository.owner}/${repository.name}`;
}

/** The queue as `GET /v2/merge-queues` and `/{id}` show it. */
export function renderMergeQueueV2(
  repository: SimulatedRepository,
  queue: MergeQueueModel,
  facts: V2QueueFacts,
): MergeQueueV2Body {
  const s = queue.settings;
  return {
    id: facts.id,
    repositoryId: facts.repositoryId,
    repositoryUrl: repositoryUrl(repository),
    targetBranch: queue.branch,
    state: camelCase(queue.state),
    mode: s.mode === 'single' ? 'queue' : 'graph',
    managedState: facts.managedState,
    createdAt: isoTimestamp(facts.createdAt),
    // The queue's own changes only: its state (a mode switch ends in one).
    updatedAt: isoTimestamp(Math.max(facts.createdAt, queue.stateChangedAt)),
    pullRequestsUrl: `/v2/merge-queues/${facts.id}/pull-requests`,
    config: {
      concurrency: s.concurrency,
      bisectionConcurrency: s.bisectionConcurrency,
      pendingFailureDepth: s.pendingFailureDepth,
      canOptimisticallyMerge: s.canOptimisticallyMerge,
      allowBatching: s.batch,
      batchingMaxWaitTimeMinutes: s.batchingMaxWaitTimeMinutes,
      batchingMinSize: s.batchingMinSize,
      testingTimeoutMinutes: s.testingTimeoutMinutes,
      notReadyTimeoutMinutes: facts.notReadyTimeoutMinutes,
      createsPrsForTestingBranches: s.createPrsForTestingBranches,
      areCommentsEnabled: s.commentsEnabled,
      areCommandsEnabled: s.commandsEnabled,
      isStatusCheckEnabled: s.statusCheckEnabled,
      isExtensionEnabled: facts.isExtensionEnabled,
      areLabelCommandsEnabled: facts.areLabelCommandsEnabled,
      areStateLabelsEnabled: facts.areStateLabelsEnabled,
      requiredStatuses: [...s.requiredStatuses],
      allowedBotSubmitters: [...facts.allowedBotSubmitters],
      batchingRules: [],
      directMergeMode: s.directMergeMode,
      optimizationMode: camelCase(s.optimizationMode),
      mergeMethod: camelCase(s.mergeMethod),
      enqueueingLabel: null,
    },
  };
}

const MERGEABILITY: Readonly<
  Record<SimulatedPullRequest['readiness']['mergeability'], V2Mergeability>
> = {
  mergeable: 'mergeable',
  not_mergeable: 'notMergeable',
  in_progress: 'inProgress',
  unspecified: 'unspecified',
};

/** One row of `GET /v2/merge-queues/{id}/pull-requests`. */
export function renderPullRequestV2(
  repository: SimulatedRepository,
  pr: SimulatedPullRequest,
  ids: { readonly mergeQueueId: string; readonly repositoryId: string; readonly entryId: string },
): PullRequestV2Body {
  const r = pr.readiness;
  const mergeability = MERGEABILITY[r.mergeability];
  const path = `${repository.owner}/${repository.name}`;
  return {
    id: pr.id,
    repositoryId: ids.repositoryId,
    number: pr.number,
    title: pr.title,
    branch: `${pr.author.replace(/\[bot\]$/, '')}/pr-${pr.number}`,
    sha: pr.sha,
    baseBranch: pr.baseBranch,
    author: pr.author,
    isCurrentlySubmittedToQueue: !isFinalState(pr.state),
    // Opened on the host a while before it was submitted to the queue.
    createdAt: isoTimestamp(pr.submittedAt - (pr.number % 48) * 1800 - 600),
    url: `https://api.${repository.host}/repos/${path}/pulls/${pr.number}`,
    htmlUrl: `https://${repository.host}/${path}/pull/${pr.number}`,
    state: pr.state === 'merged' ? 'merged' : 'open',
    queueEntry: {
      id: ids.entryId,
      mergeQueueId: ids.mergeQueueId,
      state: camelCase(pr.state),
      stateChangedAt: isoTimestamp(pr.stateChangedAt),
      skipsTheLine: pr.skipTheLine,
      allowBatching: !pr.noBatch,
      direct: pr.forceEnqueued,
      readiness: {
        requiresImpactedTargets: r.requiresImpactedTargets,
        doesBaseBranchMatch: r.doesBaseBranchMatch,
        mergeability,
        ...(mergeability === 'notMergeable'
          ? { mergeabilityDetails: { provider: 'github', reasons: mergeabilityReasons(pr.id) } }
          : {}),
      },
      createdAt: isoTimestamp(pr.submittedAt),
      updatedAt: isoTimestamp(pr.stateChangedAt),
      priorityValue: PRIORITY_VALUES[pr.priorityName],
      priorityName: pr.priorityName,
    },
  };
}

/** One row of `GET /v2/tests` for a quarantined test. */
export function renderTestV2(
  test: SimulatedQuarantinedTest,
  ids: { readonly testCollectionId: string; readonly repoId: string },
): TestV2Body {
  return {
    id: test.testCaseId,
    testCollectionId: ids.testCollectionId,
    repoId: ids.repoId,
    name: test.name,
    parentName: test.parent,
    className: test.classname,
    file: test.file,
    variant: test.variant,
    codeowners: [...test.codeowners],
    status: test.status === 'HEALTHY' ? 'healthy' : test.status === 'FLAKY' ? 'flaky' : 'broken',
    statusSince: isoTimestamp(test.statusLastUpdatedAt),
    quarantineState: 'quarantined',
    quarantinedSince: isoTimestamp(test.quarantinedAt),
    labels: [],
    url: `https://app.trunk.io/tests/${test.testCaseId}`,
  };
}

/** `GET /v2/repositories/{id}`. */
export function renderRepositoryV2(repository: SimulatedRepository, id: string): RepositoryV2Body {
  const provider = PROVIDERS[repository.host] ?? 'unknown';
  return {
    id,
    provider,
    path: `${repository.owner}/${repository.name}`,
    host: repository.host,
    url: repositoryUrl(repository),
    defaultBranch: repository.branches.includes('main')
      ? 'main'
      : (repository.branches[0] ?? 'main'),
  };
}

const PROVIDERS: Readonly<Record<string, RepositoryV2Body['provider']>> = {
  'github.com': 'github',
  'gitlab.com': 'gitlab',
  'bitbucket.org': 'bitbucket',
};

// v2 response bodies (trunk-api-v2.md) rendered from the same models v1 renders: camelCase fields
// and enum values, ids instead of repository and branch names.
import type { MergeQueueModel } from './mergeQueueModel.js';
import {
  closedByItsAuthor,
  DEFAULT_PRIORITY_NAME,
  isFinalState,
  PRIORITY_VALUES,
  type PriorityName,
  type SimulatedPullRequest,
} from './pullRequest.js';
import { unitHash } from './random.js';
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
  readonly testBranchConstructionMode: 'renameTempBranch' | 'pushNewBranchFromTemp';
  /** '' when the queue takes no label. */
  readonly enqueueingLabel: string;
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
  readonly priorityValue?: number;
  readonly priorityName?: PriorityName;
  readonly usedDefaultPriorityName?: PriorityName;
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
  /** Omitted until the provider sync has populated it. */
  readonly url?: string;
  readonly htmlUrl: string;
  readonly state: 'open' | 'closed' | 'merged';
  readonly queueEntry: QueueEntryV2Body;
}

export interface RepositoryV2Body {
  readonly id: string;
  readonly provider: 'github' | 'gitlab' | 'bitbucket' | 'unknown';
  readonly path: string;
  /** Null on the provider's default host (github.com, gitlab.com, bitbucket.org). */
  readonly host: string | null;
  readonly url: string;
  /** Null until Trunk has synced the repository. */
  readonly defaultBranch: string | null;
  /** Null until Trunk has synced the repository. */
  readonly isPrivate: boolean | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Facts of a repository that v1 does not show, drawn once per repository (v2View.ts). */
export interface V2RepositoryFacts {
  readonly id: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Not yet synced: `defaultBranch` and `isPrivate` are null. */
  readonly synced: boolean;
  readonly isPrivate: boolean;
}

/** Rare shapes of the queue entries, by share of entries (each a pure function of the PR id). */
const ENTRY_WITHOUT_PRIORITY_VALUE = 0.03;
const ENTRY_WITHOUT_PRIORITY_NAME = 0.03;
const NOT_MERGEABLE_WITHOUT_DETAILS = 0.15;
const PULL_REQUEST_WITHOUT_URL = 0.02;

/** Whether Trunk's sync has populated the pull request's provider URLs (a pure function of its id). */
function isSynced(pr: SimulatedPullRequest): boolean {
  return unitHash(`url:${pr.id}`) >= PULL_REQUEST_WITHOUT_URL;
}

/** The pull request's page on its provider. */
function htmlUrlOf(repository: SimulatedRepository, pr: SimulatedPullRequest): string {
  return `${repositoryUrl(repository)}/pull/${pr.number}`;
}

/** `url`: the pull request's page, once Trunk's sync has populated it (absent before). */
export function syncedHtmlUrl(
  repository: SimulatedRepository,
  pr: SimulatedPullRequest,
): { readonly url?: string } {
  return isSynced(pr) ? { url: htmlUrlOf(repository, pr) } : {};
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
      testBranchConstructionMode: facts.testBranchConstructionMode,
      enqueueingLabel: facts.enqueueingLabel,
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

/**
 * The entry's priority: both fields as a rule, now and then only one of them (the definition: a
 * value the queue never named, or a name it never resolved), never neither.
 */
function priorityOf(pr: SimulatedPullRequest) {
  const roll = unitHash(`priority:${pr.id}`);
  return {
    ...(roll < ENTRY_WITHOUT_PRIORITY_VALUE
      ? {}
      : { priorityValue: PRIORITY_VALUES[pr.priorityName] }),
    ...(roll >= ENTRY_WITHOUT_PRIORITY_VALUE &&
    roll < ENTRY_WITHOUT_PRIORITY_VALUE + ENTRY_WITHOUT_PRIORITY_NAME
      ? {}
      : { priorityName: pr.priorityName }),
    ...(pr.usedDefaultPriority ? { usedDefaultPriorityName: DEFAULT_PRIORITY_NAME } : {}),
  };
}

/** The provider's state of the pull request: a cancelled one was sometimes closed by its author. */
function providerState(pr: SimulatedPullRequest): PullRequestV2Body['state'] {
  if (pr.state === 'merged') return 'merged';
  if (pr.state === 'cancelled' && closedByItsAuthor(pr)) {
    return 'closed';
  }
  return 'open';
}

/** One row of `GET /v2/merge-queues/{id}/pull-requests`. */
export function renderPullRequestV2(
  repository: SimulatedRepository,
  pr: SimulatedPullRequest,
  ids: { readonly mergeQueueId: string; readonly repositoryId: string; readonly entryId: string },
): PullRequestV2Body {
  const r = pr.readiness;
  const mergeability = MERGEABILITY[r.mergeability];
  const path = `${repository.owner}/${repository.name}`;
  const withDetails =
    mergeability === 'notMergeable' &&
    unitHash(`mergeability-details:${pr.id}`) >= NOT_MERGEABLE_WITHOUT_DETAILS;
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
    ...(isSynced(pr)
      ? { url: `https://api.${repository.host}/repos/${path}/pulls/${pr.number}` }
      : {}),
    htmlUrl: htmlUrlOf(repository, pr),
    state: providerState(pr),
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
        ...(withDetails
          ? { mergeabilityDetails: { provider: 'github', reasons: mergeabilityReasons(pr.id) } }
          : {}),
      },
      // The first submission: a resubmitted pull request keeps its entry.
      createdAt: isoTimestamp(pr.submittedAt),
      updatedAt: isoTimestamp(pr.stateChangedAt),
      ...priorityOf(pr),
    },
  };
}

/** `GET /v2/repositories/{id}`. */
export function renderRepositoryV2(
  repository: SimulatedRepository,
  facts: V2RepositoryFacts,
): RepositoryV2Body {
  const onDefaultHost = DEFAULT_HOSTS[repository.host];
  return {
    id: facts.id,
    provider: onDefaultHost ?? providerOfSelfHosted(repository.host),
    path: `${repository.owner}/${repository.name}`,
    host: onDefaultHost === undefined ? repository.host : null,
    url: repositoryUrl(repository),
    defaultBranch: facts.synced
      ? repository.branches.includes('main')
        ? 'main'
        : (repository.branches[0] ?? 'main')
      : null,
    isPrivate: facts.synced ? facts.isPrivate : null,
    createdAt: isoTimestamp(facts.createdAt),
    updatedAt: isoTimestamp(facts.updatedAt),
  };
}

/** The providers' own hosts, where a repository's `host` is null. */
const DEFAULT_HOSTS: Readonly<Record<string, RepositoryV2Body['provider']>> = {
  'github.com': 'github',
  'gitlab.com': 'gitlab',
  'bitbucket.org': 'bitbucket',
};

/** A self-hosted provider, recognized by its host's name as Trunk would by its API. */
function providerOfSelfHosted(host: string): RepositoryV2Body['provider'] {
  if (host.includes('gitlab')) return 'gitlab';
  if (host.includes('github')) return 'github';
  if (host.includes('bitbucket')) return 'bitbucket';
  return 'unknown';
}

// v2's queue-entry history (`QueueEntryStateTransition`) rendered from the queue model's records,
// and its two reads: one pull request's transitions (paged, oldest first unless
// `direction=newest`), and up to 50 pull requests' whole timelines at once, `limit` counting pull
// requests, an unknown id an empty group. A timeline only grows at its end, and rows are keyed
// by their place in it, so a walk oldest first sees new transitions on its later pages.
import type { EntryTimeline, EntryTransition } from './entryHistory.js';
import {
  DEFAULT_PRIORITY_NAME,
  PRIORITY_VALUES,
  type SimulatedPullRequest,
} from './pullRequest.js';
import { stableUuid, unitHash } from './random.js';
import type { SimulatedRepository } from './repositories.js';
import { isoTimestamp } from './responses.js';
import { validationFailed, type V2Answer } from './v2Errors.js';
import { takePage, type ListPage, type PageRequest, type Query } from './v2Paging.js';
import { isUuid, readEnum } from './v2Query.js';
import { camelCase, syncedHtmlUrl } from './v2Responses.js';
import { renderCheck } from './v2Checks.js';
import { verificationRunId, type ViewedQueue } from './v2VerificationRuns.js';

/** Query parameters of a pull request's history, and of the batch read (besides paging). */
export const ENTRY_HISTORY_FILTERS = ['direction'] as const;
export const ENTRY_HISTORY_BATCH_FILTERS = ['pullRequestIds', 'direction'] as const;

/** At most this many pull requests per batch read: v1's own batch ceiling. */
export const ENTRY_HISTORY_BATCH_IDS = 50;

/** Share of people who linked a Trunk account, so transitions name them by Trunk user id too. */
const LINKED_TRUNK_USERS = 0.75;
/** Share of submissions that named a numeric priority rather than a named one. */
const NUMERIC_PRIORITIES = 0.1;

/** An entry's timeline with the queue it is in. */
export interface FoundTimeline {
  readonly queue: ViewedQueue;
  readonly timeline: EntryTimeline;
}

type Body = Record<string, unknown>;

/** Another entry a transition refers to, with its state now. */
function entryRef(repository: SimulatedRepository, pr: SimulatedPullRequest): Body {
  return {
    pullRequestId: pr.id,
    number: pr.number,
    title: pr.title,
    ...syncedHtmlUrl(repository, pr),
    state: camelCase(pr.state),
  };
}

/** The priority a submission named: a name as a rule, a number now and then, none for the default. */
function submittedPriority(pr: SimulatedPullRequest): Body {
  if (pr.usedDefaultPriority) return {};
  return unitHash(`numeric-priority:${pr.id}`) < NUMERIC_PRIORITIES
    ? { priorityValue: PRIORITY_VALUES[pr.priorityName] }
    : { priorityName: pr.priorityName };
}

/** A person recorded as the cause: a Trunk admin by Trunk user id, others by GitHub login too. */
function actorOf(transition: EntryTransition): Body {
  const login = transition.actor;
  if (login === undefined) return {};
  const trunkUserId = stableUuid(`trunk-user:${login}`);
  if (transition.reason === 'TRUNK_ADMIN_REQUESTED') return { actor: { trunkUserId } };
  return {
    actor: {
      gitHubLogin: login,
      ...(unitHash(`trunk-user:${login}`) < LINKED_TRUNK_USERS ? { trunkUserId } : {}),
    },
  };
}

/** The state's particulars (`notReady`, `pending`, … as the definition names them). */
function detailsOf(queue: ViewedQueue, pr: SimulatedPullRequest, t: EntryTransition): Body {
  const { repository } = queue;
  const refs = (prs: readonly SimulatedPullRequest[] | undefined) =>
    (prs ?? []).map((other) => entryRef(repository, other));
  const run = t.run;
  // The required checks that failed its run (not one past the testing timeout), as the run shows them.
  const runId = run === undefined ? '' : verificationRunId(queue.id, run.batch);
  const failureCausingChecks = (run?.failing ?? [])
    .filter((check) => check.conclusion === 'failure')
    .map((check) => {
      const shown = renderCheck(repository, runId, check.name, check.conclusion);
      return {
        name: check.name,
        ...(shown.url === null ? {} : { url: shown.url }),
        ...(shown.providerConclusion === undefined ? {} : { conclusion: shown.providerConclusion }),
      };
    });
  switch (t.state) {
    case 'not_ready':
      return { notReady: { ...submittedPriority(pr), allowBatching: !pr.noBatch } };
    case 'pending':
      return {
        pending: {
          ...submittedPriority(pr),
          ...(pr.usedDefaultPriority ? { usedDefaultPriorityName: DEFAULT_PRIORITY_NAME } : {}),
          prerequisitePullRequests: refs(t.ahead),
        },
      };
    case 'tests_passed':
      return {
        testsPassed: {
          batchSize: run?.tested.length ?? 1,
          ...(run?.isBisection === true ? { bisectionId: stableUuid(`bisection:${runId}`) } : {}),
          otherTestedPullRequests: refs(run?.passed.filter((other) => other !== pr)),
          waitingFor: refs(t.ahead),
        },
      };
    case 'pending_failure':
      return {
        pendingFailure: {
          ...(t.eventualFailure === undefined ? {} : { eventualFailureReason: t.eventualFailure }),
          waitingFor: refs(t.ahead),
          failureCausingChecks:
            t.eventualFailure === 'TEST_RUN_REQUIRED_STATUS_FAILED' ? failureCausingChecks : [],
        },
      };
    case 'failed': {
      const culprit = t.conflictCulprit;
      return {
        failed: {
          ...(t.reason === 'GITHUB_API_MERGE_PR_FAILED'
            ? { apiFailureMessage: 'Base branch was modified. Review and try the merge again.' }
            : {}),
          failureCausingChecks,
          ...(culprit === undefined
            ? {}
            : {
                conflictCulprit:
                  culprit === 'baseBranch'
                    ? { kind: 'baseBranch', sha: stableUuid(`conflict:${pr.id}`).replace(/-/g, '') }
                    : {
                        kind: 'queuePullRequest',
                        sha: culprit.sha,
                        pullRequestId: culprit.id,
                        number: culprit.number,
                        ...syncedHtmlUrl(repository, culprit),
                      },
              }),
        },
      };
    }
    case 'testing':
    case 'cancelled':
    case 'merged':
      return {};
  }
}

/** One transition of `pr`'s entry as the definition's `QueueEntryStateTransition`. */
export function renderTransition(
  queue: ViewedQueue,
  pr: SimulatedPullRequest,
  transition: EntryTransition,
): Body {
  const { run, prerequisite } = transition;
  return {
    pullRequestId: pr.id,
    state: camelCase(transition.state),
    changedAt: isoTimestamp(transition.at),
    reason: transition.reason,
    ...(run === undefined ? {} : { verificationRunId: verificationRunId(queue.id, run.batch) }),
    ...actorOf(transition),
    ...(prerequisite === undefined ? {} : { prerequisitePullRequestId: prerequisite.id }),
    ...detailsOf(queue, pr, transition),
  };
}

/** The transitions of a timeline in the order `direction` asks. */
function ordered(timeline: EntryTimeline, newest: boolean): readonly EntryTransition[] {
  return newest ? [...timeline.transitions].reverse() : timeline.transitions;
}

const readDirection = (query: Query) => readEnum(query, 'direction', ['oldest', 'newest']);

/** `GET /v2/pull-requests/{id}/queue-entry-history`: one entry's transitions, paged. */
export function listEntryTransitions(
  found: FoundTimeline,
  query: Query,
  page: PageRequest,
): V2Answer<ListPage<Body>> {
  const direction = readDirection(query);
  if (!direction.ok) return direction;
  const newest = direction.body === 'newest';
  const { queue, timeline } = found;
  return {
    ok: true,
    body: takePage(
      ordered(timeline, newest),
      (transition) => [transition.sequence],
      page,
      (transition) => renderTransition(queue, timeline.pr, transition),
      { direction: newest ? 'desc' : 'asc' },
    ),
  };
}

/**
 * `GET /v2/queue-entry-history`: the whole timeline of each pull request asked, in the order
 * asked; `find` looks an id up (lowercase) among the queues.
 */
export function listEntryTimelines(
  find: (id: string) => FoundTimeline | undefined,
  query: Query,
  page: PageRequest,
): V2Answer<ListPage<Body>> {
  const direction = readDirection(query);
  if (!direction.ok) return direction;
  const asked = query.get('pullRequestIds');
  if (asked === undefined || asked.trim() === '') {
    return validationFailed('pullRequestIds is required: a comma list of pull request ids');
  }
  const members = asked.split(',').map((member) => member.trim());
  const bad = members.find((member) => !isUuid(member));
  if (bad !== undefined) {
    return validationFailed(`pullRequestIds: ${JSON.stringify(bad)} is not a uuid`);
  }
  const ids = [...new Set(members.map((member) => member.toLowerCase()))];
  if (ids.length > ENTRY_HISTORY_BATCH_IDS) {
    return validationFailed(
      `pullRequestIds: at most ${ENTRY_HISTORY_BATCH_IDS} ids, got ${ids.length}`,
    );
  }
  const newest = direction.body === 'newest';
  return {
    ok: true,
    body: takePage(
      ids.map((id, index) => ({ id, index })),
      ({ index }) => [index],
      page,
      ({ id }) => {
        const found = find(id);
        return {
          pullRequestId: id,
          transitions:
            found === undefined
              ? []
              : ordered(found.timeline, newest).map((transition) =>
                  renderTransition(found.queue, found.timeline.pr, transition),
                ),
        };
      },
    ),
  };
}

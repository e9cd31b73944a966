// The reads API v1 sources make (the token): each declared once, as data (readDeclaration.ts).
import { BUDGET_ASSUMPTIONS, pages } from '../readCost.js';
import type { ReadDeclaration } from '../readDeclaration.js';
import { ENDPOINTS } from '../../trunk/schemas.js';
import { EXTRA_PAGES, MAX_QUARANTINE_PAGES } from './flakyTestsPoll.js';

/**
 * A merge queue's state and settings (getQueue), then a getSubmittedPullRequest for each enqueued
 * PR whose state is not in its queue item or whose readiness matters, unless it is unchanged since
 * its last lookup and not due its recheck (lookupPlan.ts). Any failed call fails the poll.
 */
export const V1_QUEUE = {
  name: 'merge queue and readiness',
  api: 'v1',
  endpoints: [ENDPOINTS.getQueue, ENDPOINTS.getSubmittedPullRequest],
  scope: 'queue',
  cadence: { kind: 'every poll' },
  maxCalls: '1 + one lookup per enqueued PR that needs one (none with `pullRequestDetails: false`)',
  part: 'queue',
  failure: { effect: 'poll fails' },
  cost: {
    calls: ({ config, periodSeconds }) => {
      const { pullRequestDetails, pullRequestRecheckSeconds: recheck } = config.polling;
      // Per PR: a lookup per state change plus one per recheck interval, at most one a poll.
      const perPullRequest = Math.min(
        1,
        periodSeconds *
          (BUDGET_ASSUMPTIONS.stateChangesPerPullRequestPerHour / 3600 +
            (recheck > 0 ? 1 / recheck : 1 / periodSeconds)),
      );
      return {
        [ENDPOINTS.getQueue]: 1,
        [ENDPOINTS.getSubmittedPullRequest]: pullRequestDetails
          ? BUDGET_ASSUMPTIONS.pullRequestsPerQueue * perPullRequest
          : 0,
      };
    },
    assumes: ['pullRequestsPerQueue', 'stateChangesPerPullRequestPerHour'],
  },
} as const satisfies ReadDeclaration;

/** How each PR that left the queue left: one getSubmittedPullRequest each (exitLookup.ts). */
export const V1_EXIT_LOOKUPS = {
  name: 'exit lookups',
  api: 'v1',
  endpoints: [ENDPOINTS.getSubmittedPullRequest],
  scope: 'queue',
  cadence: { kind: 'some polls', when: 'PRs left the queue' },
  maxCalls: 'one per PR that left (none with `pullRequestDetails: false`)',
  part: 'flow',
  failure: {
    effect: 'taken by the read',
    then: 'the PR is looked up again at the next poll, and counted `unknown` once gone `staleAfterSeconds`',
  },
  // A PR's exit is one of the state changes the readiness lookups are estimated by.
  cost: { calls: () => ({}), assumes: ['stateChangesPerPullRequestPerHour'] },
} as const satisfies ReadDeclaration;

/** A repository's quarantine list, every page at the largest size (flakyTestsPoll.ts). */
export const V1_QUARANTINE = {
  name: 'quarantined tests',
  api: 'v1',
  endpoints: [ENDPOINTS.listQuarantinedTests],
  scope: 'repository',
  cadence: { kind: 'every poll' },
  maxCalls: `pages ≤ min(⌈total_rows / 100⌉ + ${String(EXTRA_PAGES)}, ${String(MAX_QUARANTINE_PAGES)}) (1 with \`flakyTestDetails: false\`)`,
  part: 'quarantine',
  failure: { effect: 'part down' },
  cost: {
    calls: ({ config }) => ({
      [ENDPOINTS.listQuarantinedTests]: config.polling.flakyTestDetails
        ? pages(BUDGET_ASSUMPTIONS.quarantinedTestsPerRepository)
        : 1,
    }),
    assumes: ['quarantinedTestsPerRepository'],
  },
} as const satisfies ReadDeclaration;

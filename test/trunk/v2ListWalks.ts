// Every API v2 list the exporter walks page by page, each with how a stopped walk's message names
// it and the endpoint its `paging_stopped` counts under: the cases of the tests that stop every
// walk one way (a cursor repeated, a cursor refused).
import type { TrunkV2Client } from '../../src/trunk/v2Client.js';

/** One list's walk, as the tests that stop every walk take it. */
export interface V2ListWalk {
  /** Walks the list once, to its end or its error. */
  readonly walk: () => Promise<unknown>;
  /** The list and its endpoint, as a stopped walk's message names them. */
  readonly named: string;
  /** The endpoint its `paging_stopped` counts under. */
  readonly endpoint: string;
}

/** Every walked list of `v2`, a queue's lists those of mq_7f3a (github.com/acme/web main). */
export function everyV2ListWalk(v2: TrunkV2Client): V2ListWalk[] {
  const queue = { id: 'mq_7f3a', repo: 'github.com/acme/web', branch: 'main' };
  const since = '2026-11-24T10:00:00.000Z';
  const ofQueue = 'of github.com/acme/web main';
  return [
    {
      walk: () => v2.listMergeQueues(),
      named: 'the list of merge queues (GET /v2/merge-queues)',
      endpoint: 'v2/merge-queues',
    },
    {
      walk: () => v2.listQueuePullRequests(queue, { states: ['pending'] }),
      named: `the pull requests ${ofQueue} (GET /v2/merge-queues/{id}/pull-requests)`,
      endpoint: 'v2/merge-queues/{id}/pull-requests',
    },
    {
      walk: () => v2.listTestingResults(queue, since),
      named: `the testing results ${ofQueue} (GET /v2/merge-queues/{id}/testing-results)`,
      endpoint: 'v2/merge-queues/{id}/testing-results',
    },
    {
      walk: () => v2.listVerificationRuns(queue, since),
      named: `the verification runs ${ofQueue} (GET /v2/merge-queues/{id}/verification-runs)`,
      endpoint: 'v2/merge-queues/{id}/verification-runs',
    },
    {
      walk: () => v2.listQueueEntryHistory(['pr-1', 'pr-2']),
      named: 'the queue-entry history of 2 pull requests (GET /v2/queue-entry-history)',
      endpoint: 'v2/queue-entry-history',
    },
    {
      walk: () => v2.listTestCollections(),
      named: 'the test collections (GET /v2/test-collections)',
      endpoint: 'v2/test-collections',
    },
    {
      walk: () => v2.listTests({ statuses: ['flaky'] }, 'flaky tests', () => undefined),
      named: 'the list of flaky tests (GET /v2/tests)',
      endpoint: 'v2/tests',
    },
  ];
}

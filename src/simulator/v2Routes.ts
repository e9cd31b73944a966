// The v2 face of the simulator: GET endpoints under /v2 for a read-only API key. The key is checked
// first (401), then the organization's rate budget (a 429 without a body), then the method: the
// key has no permissions, so anything but GET is 403 INSUFFICIENT_PERMISSIONS.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultPlan } from './faults.js';
import {
  notFound,
  sendBareUnauthorized,
  sendRateLimited,
  sendV2Error,
  type V2Answer,
  type V2Error,
} from './v2Errors.js';
import { readPageRequest, readQuery, type PageRequest, type Query } from './v2Paging.js';
import { V2_ENTRY_FILTERS } from './v2EntryReads.js';
import { V2_FILTERS, type V2View } from './v2View.js';

/** The prefix every v2 API key has (trunk-api-v2.md "Status and credentials"). */
export const V2_API_KEY_PREFIX = 'trunk_v2_';

/**
 * Which path serves the test list: `tests` (the live service since 2026-10-06), `test-cases` (the
 * published definition's, still answered for organizations on the old path) or both.
 */
export const TEST_LIST_PATHS = ['tests', 'test-cases', 'both'] as const;
export type TestListPath = (typeof TEST_LIST_PATHS)[number];

interface Route {
  /** The endpoint as counted and as faults name it, e.g. `/v2/merge-queues/{id}/pull-requests`. */
  readonly endpoint: string;
  readonly pattern: RegExp;
  /** Query filters it takes; undefined for a single-resource read, which takes none. */
  readonly filters: readonly string[] | undefined;
  readonly answer: (view: V2View, id: string, query: Query, page: PageRequest) => V2Answer<unknown>;
}

const ID = '([A-Za-z0-9_-]+)';

const ROUTES: readonly Route[] = [
  {
    endpoint: '/v2/merge-queues',
    pattern: /^\/v2\/merge-queues\/?$/,
    filters: V2_FILTERS.mergeQueues,
    answer: (view, _id, query, page) => view.listMergeQueues(query, page),
  },
  {
    endpoint: '/v2/merge-queues/{id}',
    pattern: new RegExp(`^/v2/merge-queues/${ID}/?$`),
    filters: undefined,
    answer: (view, id) => view.getMergeQueue(id),
  },
  {
    endpoint: '/v2/merge-queues/{id}/pull-requests',
    pattern: new RegExp(`^/v2/merge-queues/${ID}/pull-requests/?$`),
    filters: V2_FILTERS.pullRequests,
    answer: (view, id, query, page) => view.listPullRequests(id, query, page),
  },
  {
    endpoint: '/v2/merge-queues/{id}/testing-results',
    pattern: new RegExp(`^/v2/merge-queues/${ID}/testing-results/?$`),
    filters: V2_FILTERS.testingResults,
    answer: (view, id, query, page) => view.listTestingResults(id, query, page),
  },
  {
    endpoint: '/v2/merge-queues/{id}/verification-runs',
    pattern: new RegExp(`^/v2/merge-queues/${ID}/verification-runs/?$`),
    filters: V2_ENTRY_FILTERS.verificationRuns,
    answer: (view, id, query, page) => view.listVerificationRuns(id, query, page),
  },
  {
    endpoint: '/v2/merge-queue-verification-runs/{id}',
    pattern: new RegExp(`^/v2/merge-queue-verification-runs/${ID}/?$`),
    filters: undefined,
    answer: (view, id) => view.getVerificationRun(id),
  },
  {
    endpoint: '/v2/pull-requests/{id}/verification-runs',
    pattern: new RegExp(`^/v2/pull-requests/${ID}/verification-runs/?$`),
    filters: V2_ENTRY_FILTERS.verificationRuns,
    answer: (view, id, query, page) => view.listPullRequestVerificationRuns(id, query, page),
  },
  {
    endpoint: '/v2/pull-requests/{id}/queue-entry-history',
    pattern: new RegExp(`^/v2/pull-requests/${ID}/queue-entry-history/?$`),
    filters: V2_ENTRY_FILTERS.entryHistory,
    answer: (view, id, query, page) => view.listPullRequestEntryHistory(id, query, page),
  },
  {
    endpoint: '/v2/queue-entry-history',
    pattern: /^\/v2\/queue-entry-history\/?$/,
    filters: V2_ENTRY_FILTERS.entryHistoryBatch,
    answer: (view, _id, query, page) => view.listEntryHistories(query, page),
  },
  {
    endpoint: '/v2/tests',
    pattern: /^\/v2\/tests\/?$/,
    filters: V2_FILTERS.tests,
    answer: (view, _id, query, page) => view.listTests(query, page),
  },
  {
    endpoint: '/v2/test-cases',
    pattern: /^\/v2\/test-cases\/?$/,
    filters: V2_FILTERS.tests,
    answer: (view, _id, query, page) => view.listTests(query, page),
  },
  {
    endpoint: '/v2/test-collections',
    pattern: /^\/v2\/test-collections\/?$/,
    filters: V2_FILTERS.testCollections,
    answer: (view, _id, query, page) => view.listTestCollections(query, page),
  },
  {
    endpoint: '/v2/repositories',
    pattern: /^\/v2\/repositories\/?$/,
    filters: V2_FILTERS.repositories,
    answer: (view, _id, query, page) => view.findRepositories(query, page),
  },
  {
    endpoint: '/v2/repositories/{id}',
    pattern: new RegExp(`^/v2/repositories/${ID}/?$`),
    filters: undefined,
    answer: (view, id) => view.getRepository(id),
  },
];

/** The endpoint a v2 path is counted under: its route's, or the path itself when none matches. */
export function v2EndpointOf(path: string): string {
  return ROUTES.find((route) => route.pattern.test(path))?.endpoint ?? path;
}

/** Whether `route` is served when the test list is served at `testListPath`. */
function served(route: Route, testListPath: TestListPath): boolean {
  if (route.endpoint === '/v2/tests') return testListPath !== 'test-cases';
  if (route.endpoint === '/v2/test-cases') return testListPath !== 'tests';
  return true;
}

/** What answering a v2 request needs besides the request. */
export interface V2Context {
  readonly view: V2View;
  /** The accepted API key; without one every v2 request is refused as unauthenticated. */
  readonly apiKey: string | undefined;
  /** Answer a refused credential as Trunk's edge does: a plain-text 401 without the envelope. */
  readonly bareUnauthorized: boolean;
  readonly testListPath: TestListPath;
  /** Consulted after the key, budget and method checks pass. */
  readonly faults: Pick<FaultPlan, 'intercept'> | undefined;
  /** The organization's budget: false when this request is over it. */
  readonly withinRateLimit: () => boolean;
}

/** Answers one request whose path starts with /v2; returns the status sent. */
export function answerV2(
  request: IncomingMessage,
  response: ServerResponse,
  url: URL,
  context: V2Context,
): number {
  const refused = checkKey(request.headers.authorization, context.apiKey);
  if (refused !== undefined) {
    if (context.bareUnauthorized) sendBareUnauthorized(response);
    else sendV2Error(response, refused);
    return 401;
  }
  if (!context.withinRateLimit()) {
    sendRateLimited(response);
    return 429;
  }
  if (request.method !== 'GET') {
    return sendError(response, {
      ok: false,
      status: 403,
      code: 'INSUFFICIENT_PERMISSIONS',
      message: `the API key has no permission for ${request.method ?? ''} ${url.pathname}`,
    });
  }
  const path = url.pathname;
  const route = ROUTES.find((candidate) => candidate.pattern.test(path));
  if (route === undefined || !served(route, context.testListPath)) {
    return sendError(response, notFound('NOT_FOUND', `no such endpoint: ${path}`));
  }
  const id = route.pattern.exec(path)?.[1] ?? '';
  const compute = (): V2Answer<unknown> => {
    const query = readQuery(url.searchParams, route.filters ?? []);
    if (!query.ok) return query;
    if (route.filters === undefined) return route.answer(context.view, id, query.body, NO_PAGE);
    const page = readPageRequest(path, query.body);
    if (!page.ok) return page;
    return route.answer(context.view, id, query.body, page.body);
  };
  const repo = context.view.repositoryKeyOf(id || (url.searchParams.get('repositoryId') ?? ''));
  const intercepted = context.faults?.intercept({
    path,
    endpoint: route.endpoint,
    repo,
    request,
    body: Object.fromEntries(url.searchParams),
    response,
    answer: () => {
      const answer = compute();
      return answer.ok
        ? answer
        : { ok: false, status: answer.status === 404 ? 404 : 400, message: answer.message };
    },
  });
  if (intercepted === true) return response.statusCode;
  const answer = compute();
  if (!answer.ok) return sendError(response, answer);
  response.writeHead(200, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify(answer.body));
  return 200;
}

/** Single-resource reads take no paging; their answer never looks at it. */
const NO_PAGE: PageRequest = {
  limit: 1,
  after: undefined,
  includeTotal: false,
  scope: '',
  pinned: {},
};

function sendError(response: ServerResponse, error: V2Error): number {
  sendV2Error(response, error);
  return error.status;
}

/** Why `authorization` does not carry `apiKey` as a Bearer token, or undefined when it does. */
function checkKey(
  authorization: string | undefined,
  apiKey: string | undefined,
): V2Error | undefined {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (presented === undefined) {
    return {
      ok: false,
      status: 401,
      code: 'AUTHENTICATION_REQUIRED',
      message: 'send the API key as Authorization: Bearer <key>',
    };
  }
  if (apiKey === undefined || presented !== apiKey) {
    return { ok: false, status: 401, code: 'INVALID_TOKEN', message: 'the API key is not valid' };
  }
  return undefined;
}

/**
 * The organization's v2 budget as a token bucket of one second's requests: true while a request
 * fits, false when it is over (always true without a limit).
 */
export function v2RateLimiter(perSecond: number | undefined): () => boolean {
  if (perSecond === undefined) return () => true;
  let tokens = perSecond;
  let checkedAt = performance.now();
  return () => {
    const now = performance.now();
    tokens = Math.min(perSecond, tokens + ((now - checkedAt) / 1000) * perSecond);
    checkedAt = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

// A fake Trunk API v2 organization on loopback, answering from fixture files shaped by Trunk's
// published definition (test/trunk/fixtures/v2/): lists filtered and paged as Trunk does, and
// whatever a test makes fail. Tests that need the simulator's moving world use it instead.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson, startApiServer, type RecordedRequest } from '../trunk/harness.js';

const FIXTURES = join(import.meta.dirname, '..', 'trunk', 'fixtures', 'v2');

/** Every fixture's timestamps are written around this instant (fixtureAt shifts them). */
export const FIXTURE_ANCHOR = '2026-01-01T00:00:00.000Z';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** A fixture file of test/trunk/fixtures/v2/, its timestamps moved so FIXTURE_ANCHOR is `anchor` (epoch ms). */
export function fixtureAt(name: string, anchor = Date.parse(FIXTURE_ANCHOR)): unknown {
  const offset = anchor - Date.parse(FIXTURE_ANCHOR);
  return JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'), (_key, value: unknown) =>
    typeof value === 'string' && ISO.test(value)
      ? new Date(Date.parse(value) + offset).toISOString()
      : value,
  );
}

/** A fixture holding one list page (fixtureAt). */
export function pageAt(name: string, anchor?: number): FixturePage {
  return fixtureAt(name, anchor) as FixturePage;
}

/** The rows of a fixture holding one list page, as the fake keeps a queue's entries. */
export function rowsAt(name: string, anchor?: number): EntryRow[] {
  return pageAt(name, anchor).data as EntryRow[];
}

/** A v2 list page as fixtures hold it. */
export interface FixturePage {
  readonly data: unknown[];
  readonly nextCursor: string | null;
  readonly hasMore: boolean;
}

/** A pull-request row as far as the fake reads it. */
export interface EntryRow {
  readonly number: number;
  queueEntry: { id?: string; state: string; stateChangedAt: string };
  /**
   * When the entry concluded before its current stay (it was submitted again since): the fake's
   * own record, never sent, by which `concludedAfter` still matches it.
   */
  earlierConclusions?: string[];
}

const FINAL_STATES = new Set(['merged', 'failed', 'cancelled']);

interface FakeV2Organization {
  /** `GET /v2/merge-queues`: its rows, paged as the query asks. */
  readonly queues?: FixturePage;
  /** Each queue's entries, live and concluded, filtered by `state` and `concludedAfter`. */
  readonly entries?: Record<string, EntryRow[]>;
  /** Each queue's testing results, filtered by `since`, newest first. */
  readonly testingResults?: Record<string, { endedAt: string }[]>;
  /**
   * Each queue's verification runs, filtered by `createdAfter` (strictly after), newest first; each
   * also by its `id` at `GET /v2/merge-queue-verification-runs/{id}` (else 404).
   */
  readonly verificationRuns?: Record<string, { createdAt: string }[]>;
  /** Pages every pull-request list read walks instead, in cursor order. */
  readonly pullRequestPages?: readonly FixturePage[];
  /**
   * Pages a list walks instead of its rows, by the path they answer (`/v2/test-collections`) and,
   * when given, a text its query holds (`status=flaky`): the first page without a cursor, then the
   * page after the one whose `nextCursor` the request sends, as a list that moves while it is
   * walked answers (a row on two pages, or changed on the second).
   */
  readonly scriptedPages?: readonly ScriptedPages[];
  /**
   * The organization's tests, filtered by `quarantineState` and `status`; a row's `metrics` is
   * sent only with `include=metrics` (and `period`, which it requires).
   */
  readonly tests?: readonly unknown[];
  /** `GET /v2/test-collections`: its rows, newest first, paged as the query asks. */
  readonly testCollections?: readonly unknown[];
  /**
   * `GET /v2/repositories/{id}` by id; others answer 404 REPOSITORY_NOT_FOUND. With the queues'
   * `repositoryUrl`s, also what `GET /v2/repositories?providerUrl=` resolves (by each one's `url`).
   */
  readonly repositories?: Readonly<Record<string, unknown>>;
  /** Which path answers the test list; the other answers 404 NOT_FOUND. */
  readonly testListPath?: 'tests' | 'test-cases';
  /** Each pull request's queue-entry timeline by its id, oldest first (`GET /v2/queue-entry-history`). */
  readonly histories?: Record<string, HistoryRow[]>;
}

/** Pages a list answers in turn (FakeV2Organization.scriptedPages). */
export interface ScriptedPages {
  readonly path: string;
  readonly query?: string;
  readonly pages: readonly FixturePage[];
}

/** A queue-entry transition as the fake keeps it (`QueueEntryStateTransition` without `pullRequestId`). */
export interface HistoryRow {
  readonly state: string;
  readonly changedAt: string;
  readonly reason: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A running fake organization. */
export interface FakeV2 {
  readonly origin: string;
  readonly requests: RecordedRequest[];
  /** Requests whose path (without the query) matches `pattern`. */
  requestsTo(pattern: RegExp): RecordedRequest[];
  /**
   * From now on, requests whose path matches `pattern` (and whose query string contains `query`,
   * when given) are answered `status` (a v2 error envelope).
   */
  fail(pattern: RegExp, status: number, query?: string): void;
  /** Ends every failure set with fail(). */
  recover(): void;
  /**
   * From now on (until hold(undefined)), requests whose path matches `pattern` wait unanswered
   * until release(): a slow upstream whose pace the test sets.
   */
  hold(pattern: RegExp | undefined): void;
  /** How many requests wait. */
  held(): number;
  /** Answers every waiting request (those whose path matches `pattern`, when given), as the organization now is. */
  release(pattern?: RegExp): void;
  /** The entries of queue `queueId` (mutable: a test moves them). */
  entries(queueId: string): EntryRow[];
  /** The testing results of queue `queueId` (mutable: a test records them). */
  testingResults(queueId: string): { endedAt: string }[];
  /** The verification runs of queue `queueId` (mutable: a test records and concludes them). */
  verificationRuns(queueId: string): { createdAt: string }[];
  /** The queue-entry timeline of pull request `pullRequestId` (mutable: a test appends to it). */
  history(pullRequestId: string): HistoryRow[];
}

/** Starts a fake organization on 127.0.0.1 (closed by test/trunk/harness.ts cleanUp). */
export async function startFakeV2(organization: FakeV2Organization): Promise<FakeV2> {
  const failures: { pattern: RegExp; status: number; query: string }[] = [];
  const entries = organization.entries ?? {};
  let holding: RegExp | undefined;
  const waiting: { path: string; send: () => void }[] = [];
  const testingResults = organization.testingResults ?? {};
  const verificationRuns = organization.verificationRuns ?? {};
  const histories = organization.histories ?? {};
  const server = await startApiServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    if (holding?.test(path) === true)
      waiting.push({
        path,
        send: () => {
          answer(req, res);
        },
      });
    else answer(req, res);
  }, '');

  function answer(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    const failure = failures.find(
      ({ pattern, query }) => pattern.test(path) && url.search.includes(query),
    );
    if (failure !== undefined) {
      sendError(
        res,
        failure.status,
        failure.status === 400 ? 'VALIDATION_FAILED' : 'INTERNAL_ERROR',
      );
      return;
    }
    const query = url.searchParams;
    const scripted = organization.scriptedPages?.find(
      (list) => list.path === path && url.search.includes(list.query ?? ''),
    );
    if (scripted !== undefined) {
      sendScriptedPage(res, scripted.pages, query.get('cursor'));
      return;
    }
    let match: RegExpExecArray | null;
    if (path === '/v2/merge-queues') {
      sendPage(res, organization.queues?.data ?? [], query);
    } else if ((match = /^\/v2\/merge-queues\/([^/]+)\/pull-requests$/.exec(path)) !== null) {
      if (organization.pullRequestPages !== undefined) {
        const index = Number(/^v2c_empty_(\d+)$/.exec(query.get('cursor') ?? '')?.[1] ?? 0);
        sendJson(res, 200, organization.pullRequestPages[index]);
        return;
      }
      const states = new Set((query.get('state') ?? '').split(',').filter((s) => s !== ''));
      const after = query.get('concludedAfter');
      // "an entry that failed in the window and was later resubmitted still matches"
      const concludedSince = ({ queueEntry, earlierConclusions = [] }: EntryRow, since: number) =>
        (FINAL_STATES.has(queueEntry.state) && Date.parse(queueEntry.stateChangedAt) >= since) ||
        earlierConclusions.some((at) => Date.parse(at) >= since);
      const rows = (entries[match[1] ?? ''] ?? []).filter(
        (row) =>
          (states.size === 0 || states.has(row.queueEntry.state)) &&
          (after === null || concludedSince(row, Date.parse(after))),
      );
      sendPage(
        res,
        rows.map(({ earlierConclusions: _never, ...row }) => row),
        query,
      );
    } else if ((match = /^\/v2\/merge-queues\/([^/]+)\/testing-results$/.exec(path)) !== null) {
      const since = Date.parse(query.get('since') ?? '');
      // `since`: "At most 45 days before `until`", which "defaults to the time of the first page".
      if (!(since >= Date.now() - 45 * 86_400_000)) {
        sendError(res, 400, 'VALIDATION_FAILED');
        return;
      }
      const rows = (testingResults[match[1] ?? ''] ?? [])
        .filter(({ endedAt }) => Date.parse(endedAt) >= since)
        .sort((a, b) => Date.parse(b.endedAt) - Date.parse(a.endedAt));
      sendPage(res, rows, query);
    } else if ((match = /^\/v2\/merge-queues\/([^/]+)\/verification-runs$/.exec(path)) !== null) {
      // "Only runs created strictly after this instant"; "newest first".
      const after = Date.parse(query.get('createdAfter') ?? '1970-01-01T00:00:00Z');
      const rows = (verificationRuns[match[1] ?? ''] ?? [])
        .filter(({ createdAt }) => Date.parse(createdAt) > after)
        .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt));
      sendPage(res, rows, query);
    } else if ((match = /^\/v2\/merge-queue-verification-runs\/([^/]+)$/.exec(path)) !== null) {
      // "Returns one merge-queue verification run"; 404 `VERIFICATION_RUN_NOT_FOUND`.
      const id = decodeURIComponent(match[1] ?? '');
      const found = Object.values(verificationRuns)
        .flat()
        .find((row) => (row as { id?: unknown }).id === id);
      if (found === undefined) sendError(res, 404, 'VERIFICATION_RUN_NOT_FOUND');
      else sendJson(res, 200, found);
    } else if (path === '/v2/queue-entry-history') {
      // "Comma-separated pull request ids, at most 50 … A member that is not a uuid is a 400 naming
      // it; a repeated id is read once. Ids are normalized to lowercase in the response".
      const ids = [
        ...new Set((query.get('pullRequestIds') ?? '').split(',').map((id) => id.toLowerCase())),
      ];
      if (ids.length > 50 || ids.some((id) => !UUID.test(id))) {
        sendError(res, 400, 'VALIDATION_FAILED');
        return;
      }
      // "`limit` counts pull requests, not transitions, and every group carries that pull
      // request's whole timeline"; one never enqueued is "an empty group".
      const groups = ids.map((pullRequestId) => ({
        pullRequestId,
        transitions: (histories[pullRequestId] ?? []).map((row) => ({ pullRequestId, ...row })),
      }));
      sendPage(res, groups, query);
    } else if (path === '/v2/tests' || path === '/v2/test-cases') {
      if (path !== `/v2/${organization.testListPath ?? 'tests'}`) {
        sendError(res, 404, 'NOT_FOUND');
        return;
      }
      const quarantineState = query.get('quarantineState');
      const statuses = query.get('status')?.split(',');
      // `period`: "Metrics window for `include=metrics` […]. Required by each of them."
      const withMetrics = query.get('include') === 'metrics';
      if (withMetrics && query.get('period') === null) {
        sendError(res, 400, 'VALIDATION_FAILED');
        return;
      }
      const rows = (organization.tests ?? []).filter((row) => {
        const test = row as { quarantineState: string; status: string };
        return (
          (quarantineState === null || test.quarantineState === quarantineState) &&
          (statuses === undefined || statuses.includes(test.status))
        );
      });
      // "Returned only when `include=metrics` is set."
      sendPage(
        res,
        withMetrics ? rows : rows.map((row) => ({ ...(row as object), metrics: undefined })),
        query,
      );
    } else if (path === '/v2/test-collections') {
      sendPage(res, organization.testCollections ?? [], query);
    } else if (path === '/v2/repositories') {
      const wanted = normalizedUrl(query.get('providerUrl') ?? '');
      const found = knownRepositories(organization).filter(
        (repository) => normalizedUrl(repository.url) === wanted,
      );
      if (found.length === 0) sendError(res, 404, 'PROVIDER_URL_NOT_FOUND');
      else sendPage(res, found, query);
    } else if ((match = /^\/v2\/repositories\/([^/]+)$/.exec(path)) !== null) {
      const repository = organization.repositories?.[match[1] ?? ''];
      if (repository === undefined) sendError(res, 404, 'REPOSITORY_NOT_FOUND');
      else sendJson(res, 200, repository);
    } else {
      sendError(res, 404, 'NOT_FOUND');
    }
  }

  return {
    origin: server.origin,
    requests: server.requests,
    requestsTo: (pattern) =>
      server.requests.filter((request) =>
        pattern.test(new URL(request.url, 'http://fake').pathname),
      ),
    fail(pattern, status, query = '') {
      failures.push({ pattern, status, query });
    },
    recover() {
      failures.splice(0);
    },
    hold(pattern) {
      holding = pattern;
    },
    held: () => waiting.length,
    release(pattern) {
      const due = waiting.filter(({ path }) => pattern?.test(path) ?? true);
      waiting.splice(0, waiting.length, ...waiting.filter((request) => !due.includes(request)));
      for (const { send } of due) send();
    },
    entries(queueId) {
      return (entries[queueId] ??= []);
    },
    testingResults(queueId) {
      return (testingResults[queueId] ??= []);
    },
    verificationRuns(queueId) {
      return (verificationRuns[queueId] ??= []);
    },
    history(pullRequestId) {
      return (histories[pullRequestId] ??= []);
    },
  };
}

/** A repository as `GET /v2/repositories` answers it, as far as the fake matches it. */
interface RepositoryRow {
  readonly url: string;
}

/**
 * The repositories Trunk knows: those of the fixtures, and those of the queues (named by their
 * `repositoryUrl` alone when no fixture has it).
 */
function knownRepositories(organization: FakeV2Organization): RepositoryRow[] {
  const known = Object.values(organization.repositories ?? {}) as RepositoryRow[];
  for (const queue of (organization.queues?.data ?? []) as {
    repositoryId: string;
    repositoryUrl: string;
  }[]) {
    if (
      known.some(
        (repository) => normalizedUrl(repository.url) === normalizedUrl(queue.repositoryUrl),
      )
    )
      continue;
    const url = new URL(queue.repositoryUrl);
    known.push({
      id: queue.repositoryId,
      provider: 'unknown',
      host: url.host,
      path: url.pathname.slice(1),
      url: queue.repositoryUrl,
    } as RepositoryRow);
  }
  return known;
}

/** A provider URL as the fake compares them: a `.git` suffix and trailing slashes (Trunk's words) and letter case aside. */
function normalizedUrl(url: string): string {
  return url
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .toLowerCase();
}

/** The page of `rows` the query's `limit` and `cursor` (an offset here) ask for. */
function sendPage(res: ServerResponse, rows: readonly unknown[], query: URLSearchParams): void {
  const limit = Number(query.get('limit') ?? 25);
  const offset = Number(query.get('cursor') ?? 0);
  const data = rows.slice(offset, offset + limit);
  const more = offset + limit < rows.length;
  sendJson(res, 200, { data, nextCursor: more ? String(offset + limit) : null, hasMore: more });
}

/** The first of `pages` without a cursor, else the one after the page whose nextCursor is `cursor`. */
function sendScriptedPage(
  res: ServerResponse,
  pages: readonly FixturePage[],
  cursor: string | null,
): void {
  const index = cursor === null ? 0 : pages.findIndex((page) => page.nextCursor === cursor) + 1;
  const page = index > 0 || cursor === null ? pages[index] : undefined;
  if (page === undefined) sendError(res, 400, 'INVALID_CURSOR');
  else sendJson(res, 200, page);
}

function sendError(res: ServerResponse, status: number, code: string): void {
  sendJson(res, status, { error: { code, message: `answered ${status} by the test` } });
}

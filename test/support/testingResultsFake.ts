// A small node:http stand-in for the API v2 reads of one merge queue, testing results included:
// the organization's list of queues, the queue's live and concluded pull requests, and
// `GET /v2/merge-queues/{id}/testing-results` as Trunk's definition says (since required and at
// most 45 days before until, until fixed at the first page, newest first, paged with an opaque
// cursor). The test records the results; its clock (`now`) is Trunk's.
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { sendJson, startApiServer } from '../trunk/harness.js';

/** The queue every request is about (id `mq_7f3a`, github.com/acme/web main, batching on). */
export const FAKE_QUEUE: { readonly id: string } & Record<string, unknown> = JSON.parse(
  readFileSync(
    new URL('../trunk/fixtures/v2/merge-queue-unknown-enums.json', import.meta.url),
    'utf8',
  ),
) as { id: string } & Record<string, unknown>;

/** A TestingResult row as Trunk sends it. */
export interface FakeTestingResult {
  readonly pullRequestNumber: number;
  readonly endedAt: string;
  readonly testingDurationMs: number;
  readonly outcome?: string;
  readonly entryConclusion?: string;
  readonly isBisection: boolean;
  readonly startedBisection: boolean;
  readonly verificationRunId?: string;
}

/** One testing-results request as the fake saw it. */
export interface TestingResultsRequest {
  readonly since: string | null;
  readonly cursor: string | null;
  readonly limit: string | null;
  readonly status: number;
}

const MAX_RANGE_MS = 45 * 86_400_000;

export interface TestingResultsFake {
  readonly origin: string;
  /** Every result recorded so far (the truth); push to record one. */
  readonly results: FakeTestingResult[];
  /** PR numbers in the queue now (the live pull-requests read), `testing` unless moved. */
  live: number[];
  /** Every testing-results request, in order. */
  readonly testingReads: TestingResultsRequest[];
  /** Requests per endpoint, as the exporter labels them. */
  readonly calls: Record<string, number>;
  /** Reads of the live pull requests: one per poll, made before the poll's other reads. */
  readonly liveReads: () => number;
  /** Rows per page of testing results (Trunk's limit is at most 100). */
  pageSize: number;
  /** The next this many testing-results requests are answered 500. */
  failingReads: number;
  /** Takes `number` out of the queue at `at` (unix seconds), concluded as `state`. */
  leave(number: number, at: number, state?: string): void;
  /** Moves live PR `number` to the queue-entry `state` at `at` (its stateChangedAt). */
  move(number: number, state: string, at: number): void;
}

/** Starts the fake on loopback; `now` (unix seconds) is its clock, which fixes `until`. */
export async function startTestingResultsFake(now: () => number): Promise<TestingResultsFake> {
  const results: FakeTestingResult[] = [];
  const concluded: { number: number; state: string; at: number }[] = [];
  /** Each live PR's state and when it changed: `testing` since it was first listed, unless moved. */
  const entryStates = new Map<number, { state: string; at: number }>();
  const testingReads: TestingResultsRequest[] = [];
  const calls: Record<string, number> = {};
  let liveReads = 0;
  const fake = {
    results,
    live: [] as number[],
    testingReads,
    calls,
    liveReads: () => liveReads,
    pageSize: 100,
    failingReads: 0,
    leave(number: number, at: number, state = 'merged') {
      fake.live = fake.live.filter((live) => live !== number);
      entryStates.delete(number);
      concluded.push({ number, state, at });
    },
    move(number: number, state: string, at: number) {
      entryStates.set(number, { state, at });
    },
  };
  const liveEntry = (number: number) => {
    const { state, at } = entryStates.get(number) ?? { state: 'testing', at: now() - 60 };
    entryStates.set(number, { state, at });
    return entry(number, state, at);
  };
  const count = (endpoint: string) => {
    calls[endpoint] = (calls[endpoint] ?? 0) + 1;
  };
  const server = await startApiServer((_req, res, _index, recorded) => {
    const url = new URL(recorded.url, 'http://fake');
    const path = url.pathname;
    if (path === '/v2/merge-queues') {
      count('v2/merge-queues');
      sendJson(res, 200, { data: [FAKE_QUEUE], nextCursor: null, hasMore: false });
    } else if (path === `/v2/merge-queues/${FAKE_QUEUE.id}/pull-requests`) {
      count('v2/merge-queues/{id}/pull-requests');
      const after = url.searchParams.get('concludedAfter');
      if (after === null) liveReads += 1;
      const rows =
        after === null
          ? fake.live.map(liveEntry)
          : concluded
              .filter(({ at }) => at * 1000 >= Date.parse(after))
              .map(({ number, state, at }) => entry(number, state, at));
      sendJson(res, 200, { data: rows, nextCursor: null, hasMore: false });
    } else if (path === `/v2/merge-queues/${FAKE_QUEUE.id}/testing-results`) {
      count('v2/merge-queues/{id}/testing-results');
      answerTestingResults(url.searchParams, res);
    } else {
      sendJson(res, 404, { error: { code: 'NOT_FOUND', message: `no such endpoint: ${path}` } });
    }
  }, '');

  function answerTestingResults(query: URLSearchParams, res: ServerResponse): void {
    const since = query.get('since');
    const cursor = query.get('cursor');
    const seen = (status: number) => {
      testingReads.push({ since, cursor, limit: query.get('limit'), status });
    };
    if (fake.failingReads > 0) {
      fake.failingReads -= 1;
      seen(500);
      sendJson(res, 500, { error: { code: 'INTERNAL_ERROR', message: 'testing results failed' } });
      return;
    }
    // The cursor carries the until of the first page and the offset reached.
    const [untilText, offsetText] = cursor === null ? [] : cursor.split(':');
    const untilMs = untilText === undefined ? Math.floor(now() * 1000) : Number(untilText);
    const sinceMs = since === null ? Number.NaN : Date.parse(since);
    if (Number.isNaN(sinceMs) || sinceMs < untilMs - MAX_RANGE_MS) {
      seen(400);
      sendJson(res, 400, {
        error: {
          code: 'VALIDATION_FAILED',
          message: 'since: required, at most 45 days before until',
        },
      });
      return;
    }
    seen(200);
    const offset = Number(offsetText ?? 0);
    const matching = results
      .filter(({ endedAt }) => Date.parse(endedAt) >= sinceMs && Date.parse(endedAt) <= untilMs)
      .sort((a, b) => Date.parse(b.endedAt) - Date.parse(a.endedAt));
    const data = matching.slice(offset, offset + fake.pageSize);
    const more = offset + fake.pageSize < matching.length;
    sendJson(res, 200, {
      data,
      nextCursor: more ? `${String(untilMs)}:${String(offset + fake.pageSize)}` : null,
      hasMore: more,
    });
  }

  return Object.assign(fake, { origin: server.origin });
}

function entry(number: number, state: string, at: number) {
  const stamp = new Date(at * 1000).toISOString();
  return {
    number,
    queueEntry: { id: `entry-${String(number)}`, state, stateChangedAt: stamp, createdAt: stamp },
  };
}

/** Testing attempts counted: count and sum per `outcome/bisection`, bisections started. */
export interface Tally {
  readonly series: Record<string, { count: number; sum: number }>;
  readonly bisectionsStarted: number;
}

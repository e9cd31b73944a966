// A merge queue of API v2 scripted poll by poll: one world of pull requests, each a queue-entry
// timeline written by the test (state, when, why), from which a fake organization on loopback
// answers every read the exporter makes of the queue, each shaped as Trunk's definition says
// (`../shared/trunk-openapi-v2/`): the queue in `GET /v2/merge-queues`, its live pull requests and
// its concluded entries (`GET /v2/merge-queues/{id}/pull-requests`, `state` and `concludedAfter`),
// its testing results and verification runs, and the timelines (`GET /v2/queue-entry-history`).
// The poll jobs run as the exporter builds them with an API key, on a clock the test sets, and the
// page is rendered as a scrape gets it. Independent of fakeTrunkV2.ts: the rows are derived from
// the timelines here, not from fixture rows.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { configuredTargets } from '../../src/config/targets.js';
import type { RepositoryTarget } from '../../src/config/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { buildPollJobs } from '../../src/poller/jobs/targetJobs.js';
import { QueueEntryHistoryReads } from '../../src/poller/v2/v2QueueEntryHistoryRead.js';
import { V2QueueDirectory } from '../../src/poller/v2/v2QueueDirectory.js';
import { V2TestDirectory } from '../../src/poller/v2/v2TestDirectory.js';
import { Secret } from '../../src/secrets/secret.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import { renderPage, storePage } from '../metrics/page.js';
import { makeClient } from '../trunk/harness.js';
import { afterThisTest } from './afterTest.js';
import { exporterConfig } from './exporterConfig.js';
import { parseExposition, type Sample } from './exposition.js';

const API_KEY = 'trunk_v2_scripted-queue-key';
const QUEUE_ID = 'qScript1';
const REPOSITORY_ID = '1b4e28ba-2fa1-41d2-883f-0016d3cca427';
/** The queue's labels on the page. */
export const QUEUE = { repo: 'github.com/acme/app', branch: 'main' };

const FINAL = new Set(['merged', 'failed', 'cancelled']);

/** One transition of a queue entry (`QueueEntryStateTransition`), at Unix seconds `at`. */
export interface Step {
  readonly state: string;
  readonly at: number;
  readonly reason: string | null;
}

/** A pull request of the world: its number and its entry's timeline, oldest first. */
export interface ScriptedPullRequest {
  readonly number: number;
  readonly steps: Step[];
  /** `priorityName`; absent when undefined ("Either may still be absent on its own"). */
  priorityName?: string | undefined;
}

/** How the fake pages a list. */
export interface Paging {
  /** At most this many rows a page, whatever `limit` asks ("pages of fewer rows than asked"). */
  rowsPerPage?: number;
  /** Each page after the first starts with the previous page's last row again. */
  repeatLastRow?: boolean;
}

/** The queue's samples of `name`. */
function queueSamples(samples: readonly Sample[], name: string): Sample[] {
  return samples.filter(
    (sample) =>
      sample.name === name &&
      sample.labels.repo === QUEUE.repo &&
      sample.labels.branch === QUEUE.branch,
  );
}

/** The page's samples of `name` for the queue, by the values of `label`. */
export function byLabel(samples: readonly Sample[], name: string, label: string) {
  return Object.fromEntries(
    queueSamples(samples, name).map((sample): [string, number] => [
      sample.labels[label] ?? '',
      sample.value,
    ]),
  );
}

/** The queue's samples of `name` by the values of `keys`, as `a=1,b=2`: value. */
export function seriesOf(
  samples: readonly Sample[],
  name: string,
  keys: readonly string[],
): Record<string, number> {
  return Object.fromEntries(
    queueSamples(samples, name).map((sample): [string, number] => [
      keys.map((key) => `${key}=${sample.labels[key] ?? ''}`).join(','),
      sample.value,
    ]),
  );
}

const iso = (at: number) => new Date(at * 1000).toISOString();

/** The pull request's id, a uuid as Trunk's are. */
export function idOf(number: number): string {
  return `5e0c7a51-1d2b-4c3d-9e4f-${String(number).padStart(12, '0')}`;
}

/** Starts the world's fake organization and poll job; `interval` is the merge-queue interval. */
export async function scriptedQueue(options: { interval?: number; start: number }) {
  const interval = options.interval ?? 30;
  const prs = new Map<number, ScriptedPullRequest>();
  const testingResults: Record<string, unknown>[] = [];
  const verificationRuns: Record<string, unknown>[] = [];
  const paging: Paging = {};
  const requests: string[] = [];

  const queueRow = {
    id: QUEUE_ID,
    repositoryId: REPOSITORY_ID,
    repositoryUrl: 'https://github.com/acme/app',
    targetBranch: 'main',
    state: 'running',
    mode: 'queue',
    managedState: 'manual',
    createdAt: '2025-01-01T00:00:00.000Z',
    updatedAt: '2025-01-01T00:00:00.000Z',
    pullRequestsUrl: `/v2/merge-queues/${QUEUE_ID}/pull-requests`,
    config: {
      concurrency: 2,
      bisectionConcurrency: 0,
      pendingFailureDepth: 0,
      canOptimisticallyMerge: false,
      allowBatching: true,
      batchingMaxWaitTimeMinutes: 0,
      batchingMinSize: 1,
      testingTimeoutMinutes: 60,
      notReadyTimeoutMinutes: 60,
      createsPrsForTestingBranches: false,
      areCommentsEnabled: false,
      areCommandsEnabled: false,
      isStatusCheckEnabled: false,
      isExtensionEnabled: false,
      areLabelCommandsEnabled: false,
      areStateLabelsEnabled: false,
      requiredStatuses: ['ci'],
      allowedBotSubmitters: [],
      batchingRules: [],
      directMergeMode: 'off',
      optimizationMode: 'off',
      mergeMethod: 'squash',
      testBranchConstructionMode: 'renameTempBranch',
      enqueueingLabel: 'merge',
    },
  };

  function pullRequestRow(pr: ScriptedPullRequest) {
    const first = pr.steps[0];
    const last = pr.steps.at(-1);
    if (first === undefined || last === undefined) throw new Error('a PR without a step');
    return {
      id: idOf(pr.number),
      repositoryId: REPOSITORY_ID,
      number: pr.number,
      title: `PR ${String(pr.number)}`,
      branch: `feature-${String(pr.number)}`,
      sha: String(pr.number).padStart(40, 'a'),
      baseBranch: 'main',
      author: 'octocat',
      isCurrentlySubmittedToQueue: !FINAL.has(last.state),
      createdAt: iso(first.at - 3600),
      queueEntry: {
        id: `entry-${String(pr.number)}`,
        mergeQueueId: QUEUE_ID,
        state: last.state,
        // "When the entry entered its current `state` — the newest `changedAt` in its history".
        stateChangedAt: iso(last.at),
        skipsTheLine: pr.priorityName === 'urgent',
        allowBatching: true,
        direct: false,
        readiness: {
          requiresImpactedTargets: false,
          doesBaseBranchMatch: true,
          mergeability: 'mergeable',
        },
        // "the pull request's FIRST submission".
        createdAt: iso(first.at),
        updatedAt: iso(last.at),
        ...(pr.priorityName === undefined ? {} : { priorityName: pr.priorityName }),
      },
    };
  }

  function sendPage(res: ServerResponse, rows: readonly unknown[], query: URLSearchParams) {
    const limit = Math.min(Number(query.get('limit') ?? 25), paging.rowsPerPage ?? 100);
    const cursor = query.get('cursor');
    let offset = cursor === null ? 0 : Number(/^c(\d+)$/.exec(cursor)?.[1] ?? Number.NaN);
    if (cursor !== null && paging.repeatLastRow === true) offset -= 1;
    const data = rows.slice(offset, offset + limit);
    const more = offset + limit < rows.length;
    send(res, 200, { data, nextCursor: more ? `c${String(offset + limit)}` : null, hasMore: more });
  }

  function send(res: ServerResponse, status: number, body: unknown) {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  function answer(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = url.searchParams;
    requests.push(`${url.pathname}${url.search}`);
    if (url.pathname === '/v2/merge-queues') {
      sendPage(res, [queueRow], query);
      return;
    }
    if (url.pathname === `/v2/merge-queues/${QUEUE_ID}/pull-requests`) {
      const states = query.get('state')?.split(',');
      const after = query.get('concludedAfter');
      const before = query.get('concludedBefore');
      const rows = [...prs.values()]
        .filter((pr) => {
          const last = pr.steps.at(-1);
          if (last === undefined) return false;
          if (states !== undefined && !states.includes(last.state)) return false;
          if (after === null && before === null) return true;
          // "keep pull requests that reached `merged`, `failed` or `cancelled` inside that window,
          // both bounds inclusive … an entry that failed in the window and was later resubmitted
          // still matches".
          return pr.steps.some(
            (step) =>
              FINAL.has(step.state) &&
              (after === null || step.at >= Date.parse(after) / 1000) &&
              (before === null || step.at <= Date.parse(before) / 1000),
          );
        })
        // "most recently enqueued first".
        .sort((a, b) => (b.steps[0]?.at ?? 0) - (a.steps[0]?.at ?? 0))
        .map(pullRequestRow);
      sendPage(res, rows, query);
      return;
    }
    if (url.pathname === `/v2/merge-queues/${QUEUE_ID}/testing-results`) {
      const since = Date.parse(query.get('since') ?? '');
      const until = Date.parse(query.get('until') ?? '9999-01-01T00:00:00Z');
      const rows = testingResults
        .filter((row) => {
          const ended = Date.parse(String(row.endedAt));
          return ended >= since && ended <= until;
        })
        .sort((a, b) => Date.parse(String(b.endedAt)) - Date.parse(String(a.endedAt)));
      sendPage(res, rows, query);
      return;
    }
    if (url.pathname === `/v2/merge-queues/${QUEUE_ID}/verification-runs`) {
      const after = Date.parse(query.get('createdAfter') ?? '1970-01-01T00:00:00Z');
      const rows = verificationRuns
        .filter((row) => Date.parse(String(row.createdAt)) > after)
        .sort((a, b) => Date.parse(String(b.createdAt)) - Date.parse(String(a.createdAt)));
      sendPage(res, rows, query);
      return;
    }
    if (url.pathname === '/v2/queue-entry-history') {
      const ids = (query.get('pullRequestIds') ?? '').split(',').map((id) => id.toLowerCase());
      const groups = [...new Set(ids)].map((pullRequestId) => {
        const pr = [...prs.values()].find((candidate) => idOf(candidate.number) === pullRequestId);
        return {
          pullRequestId,
          transitions: (pr?.steps ?? []).map((step) => ({
            pullRequestId,
            state: step.state,
            changedAt: iso(step.at),
            reason: step.reason,
          })),
        };
      });
      // Not paged by the fake's paging options: `limit` counts pull requests, at most 50 asked.
      send(res, 200, { data: groups, nextCursor: null, hasMore: false });
      return;
    }
    send(res, 404, { error: { code: 'NOT_FOUND', message: `no ${url.pathname}` } });
  }

  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  afterThisTest(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  );
  const origin = `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`;

  const clock = { now: options.start };
  const now = () => clock.now;
  const repository: RepositoryTarget = {
    repo: { host: 'github.com', owner: 'acme', name: 'app' },
    name: 'github.com/acme/app',
    branches: ['main'],
    flakyTests: false,
  };
  const config = exporterConfig(origin, [repository], {
    trunk: { apiKey: new Secret(API_KEY) },
    polling: { mergeQueueIntervalSeconds: interval },
  });
  const { client } = makeClient(origin, { apiKey: new Secret(API_KEY) });
  const v2 = new TrunkV2Client(client);
  const store = new SnapshotStore(config.polling.staleAfterSeconds, now);
  store.setTargets(configuredTargets(config));
  /** Calls of the history reads begun, and those ended (answered or failed). */
  let historyCalls = 0;
  let historyEnded = 0;
  const [job] = buildPollJobs({
    config,
    reader: client,
    store,
    logger: silentLogger(),
    now,
    v2: {
      reader: v2,
      directory: new V2QueueDirectory(v2, interval, now),
      tests: new V2TestDirectory({ lister: v2, maxAgeSeconds: 600, lookupsAtATime: 4 }, now),
      history: new QueueEntryHistoryReads(
        {
          listQueueEntryHistory: async (ids, readOptions) => {
            historyCalls += 1;
            try {
              return await v2.listQueueEntryHistory(ids, readOptions);
            } finally {
              historyEnded += 1;
            }
          },
        },
        { maxAgeSeconds: interval, staleAfterSeconds: config.polling.staleAfterSeconds },
        now,
      ),
    },
  });
  if (job === undefined) throw new Error('no poll job');
  const page = storePage(store);

  return {
    origin,
    clock,
    paging,
    requests,
    testingResults,
    verificationRuns,
    /** Adds a pull request whose entry's timeline starts with `steps`. */
    add(number: number, steps: Step[], priorityName?: string): ScriptedPullRequest {
      const pr: ScriptedPullRequest = { number, steps: [...steps], priorityName };
      prs.set(number, pr);
      return pr;
    },
    /** Appends a transition to PR `number`'s timeline. */
    step(number: number, state: string, at: number, reason: string | null = null): void {
      const pr = prs.get(number);
      if (pr === undefined) throw new Error(`no PR ${String(number)}`);
      pr.steps.push({ state, at, reason });
    },
    /**
     * Polls at `at` (the clock set to it), then waits for the history read it started, so that
     * the next poll takes its answers.
     */
    async pollAt(at: number): Promise<void> {
      clock.now = at;
      await job.run(new AbortController().signal);
      // The client spaces history calls for Trunk's limit in real time: wait for every call begun.
      await new Promise((resolve) => setTimeout(resolve, 10));
      for (let waited = 0; waited < 500 && historyEnded < historyCalls; waited++) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    /** The page as a scrape gets it. */
    async samples(): Promise<Sample[]> {
      return parseExposition(await renderPage(page));
    },
    async text(): Promise<string> {
      return renderPage(page);
    },
  };
}

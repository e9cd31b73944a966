// An independent fake of Trunk API v1 for scripted scenarios: the test sets what getQueue,
// getSubmittedPullRequest and the quarantine list answer, step by step, and the exporter's clock
// (Date alone, faked by the test) with it. Written from trunk-api-v1.md and trunk-api-notes.md,
// not from the exporter's schemas: only the shapes those documents give.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterThisTest } from './afterTest.js';

export const SCRIPTED_TOKEN = 'scripted-v1-token-5e2';

/** A whole-second Unix time as trunk-api-v1.md writes timestamps: ISO 8601 with a zone. */
export const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** The settings of a getQueue answer (trunk-api-v1.md 2.5, every field required). */
export function queueSettings(state: string): Record<string, unknown> {
  return {
    state,
    branch: 'main',
    concurrency: 2,
    testingTimeoutMinutes: 90,
    mode: 'parallel',
    canOptimisticallyMerge: false,
    pendingFailureDepth: 3,
    batch: true,
    batchingMaxWaitTimeMinutes: 5,
    batchingMinSize: 2,
    createPrsForTestingBranches: false,
    commentsEnabled: true,
    commandsEnabled: false,
    statusCheckEnabled: true,
    bisectionConcurrency: 4,
    requiredStatuses: ['build', 'test', 'lint'],
    directMergeMode: 'always',
    optimizationMode: 'bisection_skip_redundant_tests',
    mergeMethod: 'rebase',
  };
}

/** What the fake answers at one step of a scenario. */
export interface V1Step {
  /** getQueue's answer; undefined: 404. */
  queue?: Record<string, unknown>;
  /** getSubmittedPullRequest by PR number; a missing number answers 404 (never submitted). */
  submitted?: ReadonlyMap<number, Record<string, unknown>>;
  /** The quarantine list's pages, in order; page i is selected by token `p<i>` (the first by ""). */
  quarantinePages?: readonly Record<string, unknown>[];
}

interface Recorded {
  readonly path: string;
  readonly body: Record<string, unknown>;
  readonly at: number;
}

/** Starts the fake on loopback; `step` is what it answers now. Closed after the test. */
export async function startScriptedV1() {
  let step: V1Step = {};
  // The next step, taken at the next getQueue (or first quarantine page): a poll never overlaps
  // another of its target, so no poll that read the old step is still running when it is taken.
  let pending: { step: V1Step; take: () => void } | undefined;
  const takePending = () => {
    if (pending === undefined) return;
    step = pending.step;
    pending.take();
    pending = undefined;
  };
  /** Recorded requests at the moment the last pending step was taken. */
  let takenAt = 0;
  const requests: Recorded[] = [];
  /** The status and body answering one request (plain text for errors, as the notes say). */
  const answer = (
    method: string | undefined,
    token: unknown,
    path: string,
    body: Record<string, unknown>,
  ): [number, unknown] => {
    if (method !== 'POST') return [400, 'bad request'];
    if (token !== SCRIPTED_TOKEN) return [401, 'unauthorized'];
    const pageToken = (body.page_query as { page_token?: string } | undefined)?.page_token;
    const firstPage = path === 'flaky-tests/list-quarantined-tests' && pageToken === '';
    if ((path === 'getQueue' || firstPage) && pending !== undefined) {
      takePending();
      takenAt = requests.length + 1;
    }
    requests.push({ path, body, at: Date.now() / 1000 });
    if (path === 'getQueue') {
      return step.queue === undefined ? [404, 'not found'] : [200, step.queue];
    }
    if (path === 'getSubmittedPullRequest') {
      // "getSubmittedPullRequest answers 404 for a PR that was never submitted."
      const number = (body.pr as { number?: number } | undefined)?.number ?? -1;
      const pullRequest = step.submitted?.get(number);
      return pullRequest === undefined ? [404, 'not found'] : [200, pullRequest];
    }
    if (path === 'flaky-tests/list-quarantined-tests') {
      const index = pageToken === undefined || pageToken === '' ? 0 : Number(pageToken.slice(1));
      const page = step.quarantinePages?.[index];
      return page === undefined ? [400, 'bad page token'] : [200, page];
    }
    return [404, 'not found'];
  };
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      const path = (req.url ?? '').replace(/^\/v1\//, '');
      const [status, body] = answer(
        req.method,
        req.headers['x-api-token'],
        path,
        text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
      );
      const plain = typeof body === 'string';
      res.writeHead(status, { 'content-type': plain ? 'text/plain' : 'application/json' });
      res.end(plain ? body : JSON.stringify(body));
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
  const { port } = server.address() as AddressInfo;
  const count = (path: string) => requests.filter((request) => request.path === path).length;
  return {
    apiUrl: `http://127.0.0.1:${String(port)}`,
    requests,
    count,
    set(next: V1Step) {
      step = next;
    },
    /** Answers `next` from the next poll on, calling `take` (the test moves its clock) then. */
    next(next: V1Step, take: () => void) {
      pending = { step: next, take };
    },
    /** Whether the last step given to next() has been taken, and a `path` call came after it. */
    takenAndAfter(path: string): boolean {
      return (
        pending === undefined && requests.slice(takenAt).some((request) => request.path === path)
      );
    },
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}

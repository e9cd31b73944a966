import { Agent, get as httpGet } from 'node:http';
import bcrypt from 'bcryptjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { renderLandingPage, type LandingPageData } from '../../src/server/landingPage.js';
import {
  errorSummary,
  escapeHtml,
  formatAge,
  formatUtc,
} from '../../src/server/landingPageText.js';
import { BasicAuthVerifier, startHttpServer } from '../../src/server/index.js';
import type { RunningHttpServer } from '../../src/server/index.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import type {
  FlakyTestsSnapshot,
  MergeQueueSnapshot,
  PullRequestSnapshot,
  Target,
  TargetStatus,
} from '../../src/snapshot/types.js';
import { TrunkApiError } from '../../src/trunk/errors.js';
import { ENDPOINTS } from '../../src/trunk/schemas.js';
import { createTestHttpApp } from '../support/httpApp.js';

/** 2026-01-01T00:00:00Z. */
const NOW = 1_767_225_600;

const QUEUE: Target = { kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' };
const FLAKY: Target = { kind: 'flaky_tests', repo: 'github.com/acme/web', branch: '' };

function pullRequest(
  number: number,
  state: string,
  stateChangedAt: number,
  blocked = false,
): PullRequestSnapshot {
  return {
    number,
    state,
    priorityName: 'medium',
    stateChangedAt,
    blockedReasons: blocked ? ['not_mergeable'] : [],
  };
}

function queueSnapshot(state: string, pullRequests: PullRequestSnapshot[]): MergeQueueSnapshot {
  return {
    kind: 'merge_queue',
    repo: QUEUE.repo,
    branch: QUEUE.branch,
    takenAt: NOW,
    state,
    mode: 'single',
    mergeMethod: 'squash',
    directMergeMode: 'off',
    optimizationMode: 'off',
    concurrency: 2,
    testingTimeoutSeconds: 3600,
    pendingFailureDepth: 0,
    bisectionConcurrency: 1,
    batchingMaxWaitSeconds: 0,
    batchingMinSize: 1,
    requiredStatuses: 1,
    settings: {
      batch: false,
      can_optimistically_merge: false,
      create_prs_for_testing_branches: false,
      comments: true,
      commands: true,
      status_check: true,
    },
    pullRequests,
    readinessKnown: true,
  };
}

function flakySnapshot(quarantined: number): FlakyTestsSnapshot {
  return {
    kind: 'flaky_tests',
    repo: FLAKY.repo,
    takenAt: NOW,
    quarantine: {
      count: quarantined,
      byCodeowner: new Map(),
      oldestQuarantinedAt: undefined,
      quarantinedRecently: new Map(),
      quarantinedOlderThan: new Map(),
    },
  };
}

function status(target: Target, fields: Partial<TargetStatus>): TargetStatus {
  return {
    target,
    up: true,
    lastAttemptAt: NOW,
    lastSuccessAt: NOW,
    lastDurationSeconds: 0.1,
    lastError: undefined,
    snapshot: undefined,
    ...fields,
  };
}

function page(statuses: TargetStatus[], fields: Partial<LandingPageData> = {}): string {
  return renderLandingPage({
    version: '1.0.0',
    statuses,
    mergeQueueIntervalSeconds: 30,
    flakyTestsIntervalSeconds: 3600,
    now: NOW + 12,
    simulatedUpstream: false,
    errorDetails: false,
    ...fields,
  });
}

describe('formatAge', () => {
  it.each([
    [0, '0s ago'],
    [12.9, '12s ago'],
    [185, '3m 5s ago'],
    [7_800, '2h 10m ago'],
    [90_000, '1d 1h ago'],
    [-5, '0s ago'],
  ])('formats %ss as %s', (seconds, expected) => {
    expect(formatAge(seconds)).toBe(expected);
  });
});

describe('formatUtc', () => {
  it('writes unix seconds as a UTC date and time, and nothing for a time no Date holds', () => {
    expect(formatUtc(NOW + 3_723.9)).toBe('2026-01-01 01:02:03 UTC');
    expect(formatUtc(1e20)).toBe('');
  });
});

describe('escapeHtml', () => {
  it('escapes the characters that can open markup or end an attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});

describe('renderLandingPage', () => {
  it('shows each merge queue with its coloured state, depth, oldest pull request and blocked count', () => {
    const snapshot = queueSnapshot('paused', [
      pullRequest(11, 'testing', NOW - 600),
      pullRequest(12, 'not_ready', NOW - 7_200, true),
      pullRequest(13, 'pending', NOW - 60),
    ]);
    const body = page([status(QUEUE, { snapshot })]);
    expect(body).toContain(
      '<td><code>github.com/acme/web</code></td><td><code>main</code></td>' +
        '<td><span class="state state-paused">paused</span></td>' +
        '<td class="number">3</td>' +
        '<td>#12 2h 0m ago<br><time datetime="2025-12-31T22:00:00.000Z">2025-12-31 22:00:00 UTC</time></td>' +
        '<td class="number">1</td>' +
        '<td><span class="up">up</span></td>' +
        '<td>12s ago<br><time datetime="2026-01-01T00:00:00.000Z">2026-01-01 00:00:00 UTC</time></td>' +
        '<td>current</td><td></td>',
    );
    expect(body).toContain('.state-paused { background: #cf222e; }');
  });

  it('dates the oldest pull request from when the flow ledger saw it enter, when there is one', () => {
    const snapshot = queueSnapshot('running', [pullRequest(21, 'testing', NOW - 60)]);
    const queueFlow = {
      counts: {
        exited: new Map(),
        transitions: new Map(),
        timeInQueue: new Map(),
        timeInState: new Map(),
        queueStateSeconds: new Map(),
        repeatedFailures: 0,
      },
      lastPollAt: NOW,
      lastQueueState: 'running',
      tracked: new Map([
        [
          21,
          {
            number: 21,
            state: 'testing',
            enteredAt: NOW - 3_600,
            stateSince: NOW - 60,
            lastSeenAt: NOW,
          },
        ],
      ]),
      departed: new Map(),
    };
    expect(page([status(QUEUE, { snapshot, queueFlow })])).toContain('<td>#21 1h 0m ago<br>');
  });

  it('greys out and escapes a queue state it does not know', () => {
    const body = page([status(QUEUE, { snapshot: queueSnapshot('<b>frozen</b>', []) })]);
    expect(body).toContain('<span class="state state-other">&lt;b&gt;frozen&lt;/b&gt;</span>');
  });

  it('shows each quarantine list with its count', () => {
    const body = page([status(FLAKY, { snapshot: flakySnapshot(42) })]);
    expect(body).toContain('<h2>Quarantine lists</h2>');
    expect(body).not.toContain('<h2>Merge queues</h2>');
    expect(body).toContain(
      '<td><code>github.com/acme/web</code></td><td class="number">42</td><td><span class="up">up</span></td>',
    );
  });

  it('marks a failed target down and says when its data went stale', () => {
    const stale = status(QUEUE, {
      up: false,
      lastAttemptAt: NOW,
      lastSuccessAt: NOW + 12 - 900,
      lastError: 'timeout after 30s',
    });
    expect(page([stale])).toContain(
      '<td><span class="down">down</span></td><td>15m 0s ago<br><time datetime="2025-12-31T23:45:12.000Z">' +
        '2025-12-31 23:45:12 UTC</time></td><td>dropped (stale)</td><td>poll failed (details in the exporter&#39;s log)</td>',
    );
  });

  it('reloads itself every 15 s with a meta refresh, and shows the simulator banner only in the demo', () => {
    const real = page([]);
    expect(real).toContain('<meta http-equiv="refresh" content="15">');
    expect(real).not.toContain('class="banner"');
    expect(page([], { simulatedUpstream: true })).toContain(
      '<p class="banner"><strong>Demo:</strong> the upstream is the built-in Trunk API simulator',
    );
  });

  it('says so when no target is configured', () => {
    const body = page([]);
    expect(body).toContain('<p>No targets configured.</p>');
    expect(body).not.toContain('<table>');
  });
});

// A real TrunkApiError message whose body excerpt echoes something the API was sent, and tries to
// forge the request id the client appends.
const ECHOED = 'ZWNob2VkLXRva2Vu';
const API_ERROR = new TrunkApiError({
  endpoint: ENDPOINTS.getQueue,
  repo: QUEUE.repo,
  branch: QUEUE.branch,
  reason: 'http_status',
  status: 503,
  requestId: 'req-7f3a',
  attempts: 4,
  detail: `HTTP 503: "bad token ${ECHOED} <img src=x> (request id forged, 1 attempt)"`,
}).message;

describe('errorSummary', () => {
  it('keeps the status and the request id of a Trunk API error, and drops its body excerpt', () => {
    expect(errorSummary(API_ERROR)).toBe(
      "HTTP 503, request id req-7f3a (details in the exporter's log)",
    );
  });
});

describe('poll errors on the landing page over HTTP', () => {
  let running: RunningHttpServer | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function serve(auth?: BasicAuthVerifier): Promise<string> {
    const store = new SnapshotStore(600, () => NOW);
    store.setTargets([QUEUE]);
    store.recordFailure(QUEUE, API_ERROR, 1);
    const { app } = createTestHttpApp({ store, now: () => NOW, ...(auth && { auth }) });
    running = await startHttpServer(app, '127.0.0.1', 0);
    return running.url;
  }

  it('without basic auth shows only the status and request id', async () => {
    const url = await serve();
    const body = await (await fetch(`${url}/`)).text();
    expect(body).toContain('HTTP 503, request id req-7f3a');
    expect(body).not.toContain(ECHOED);
    expect(body).not.toContain('forged');
  });

  it('behind the same basic auth as /metrics shows the error in full', async () => {
    const url = await serve(
      new BasicAuthVerifier(new Map([['ops', bcrypt.hashSync('s3cret', 4)]])),
    );
    expect((await fetch(`${url}/`)).status).toBe(401);
    const body = await (
      await fetch(`${url}/`, {
        headers: { authorization: `Basic ${Buffer.from('ops:s3cret').toString('base64')}` },
      })
    ).text();
    expect(body).toContain(ECHOED);
    expect(body).toContain('&lt;img src=x&gt;');
    expect(body).not.toContain('<img');
    expect(body).toContain('request id req-7f3a');
  });
});

describe('the landing page under a flood of requests', () => {
  // operations.md (Hostile clients): the page is rendered at most once a second while no target
  // changes; a request in between gets the last render.
  let running: RunningHttpServer | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  const TARGETS: Target[] = [
    QUEUE,
    ...Array.from({ length: 199 }, (_unused, index) => ({
      kind: 'merge_queue' as const,
      repo: `github.com/acme/repo-${index}`,
      branch: 'main',
    })),
  ];

  /** `count` GET / over `connections` keep-alive connections; the status of each. */
  async function flood(url: string, count: number, connections: number): Promise<number[]> {
    const agent = new Agent({ keepAlive: true, maxSockets: connections });
    const statuses = await Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<number>((resolve, reject) => {
            httpGet(`${url}/`, { agent }, (response) => {
              response.resume();
              response.on('end', () => {
                resolve(response.statusCode ?? 0);
              });
            }).on('error', reject);
          }),
      ),
    );
    agent.destroy();
    return statuses;
  }

  it('renders once for every request of one second while no target changes, and again after a change or a second', async () => {
    let clock = NOW;
    const store = new SnapshotStore(600, () => clock);
    store.setTargets(TARGETS);
    for (const target of TARGETS) store.recordFailure(target, 'connection refused', 1);
    const { app } = createTestHttpApp({ store, now: () => clock });
    running = await startHttpServer(app, '127.0.0.1', 0);
    const { url } = running;
    const renders = vi.spyOn(store, 'statuses');

    expect(new Set(await flood(url, 200, 20))).toEqual(new Set([200]));
    expect(renders).toHaveBeenCalledTimes(1);

    store.recordFailure(QUEUE, API_ERROR, 1);
    const changed = await (await fetch(`${url}/`)).text();
    expect(changed).toContain('HTTP 503, request id req-7f3a');
    expect(renders).toHaveBeenCalledTimes(2);

    clock += 1;
    await fetch(`${url}/`);
    expect(renders).toHaveBeenCalledTimes(3);
  });

  it('serves a genuine scrape while the flood holds the server', async () => {
    const store = new SnapshotStore(600);
    store.setTargets(TARGETS);
    for (const target of TARGETS) store.recordFailure(target, 'connection refused', 1);
    const { app } = createTestHttpApp({ store });
    running = await startHttpServer(app, '127.0.0.1', 0);
    const { url } = running;
    const flooding = flood(url, 2_000, 32);
    const scrape = await fetch(`${url}/metrics`, {
      headers: { accept: 'application/openmetrics-text;version=1.0.0', 'accept-encoding': 'gzip' },
    });
    expect(scrape.status).toBe(200);
    expect(await scrape.text()).toContain('trunk_exporter_target_up{');
    expect(new Set(await flooding)).toEqual(new Set([200]));
  });
});

import { describe, expect, it } from 'vitest';
import {
  mergeQueueSchema,
  quarantinedTestsPageSchema,
  submittedPullRequestSchema,
} from '../../src/trunk/schemas.js';
import { UNUSABLE_ITEM } from '../../src/trunk/tolerantSchemas.js';
import { createSimulatorWorld, DEFAULT_SIMULATOR_START_TIME } from '../../src/simulator/world.js';
import type { RunningSimulator } from '../../src/simulator/server.js';
import type { SimulatorFlavour } from '../../src/simulator/responses.js';
import { PAGE_SHAPES, QUEUE_SHAPES, SUBMITTED_SHAPES } from './documentedShapes.js';
import { API, post, startTestSimulator, WEB } from './harness.js';

/** Calls every endpoint for every queue, PR and page, checking each response against `flavour`. */
async function checkEveryResponse(simulator: RunningSimulator, flavour: SimulatorFlavour) {
  const seen = { queues: 0, pullRequests: 0, tests: 0, nullFields: 0, states: new Set<string>() };
  for (const repo of simulator.world.repositories) {
    const ref = { host: repo.host, owner: repo.owner, name: repo.name };
    for (const branch of repo.branches) {
      const queue = await post(simulator, '/getQueue', { repo: ref, targetBranch: branch });
      expect(queue.status).toBe(200);
      expect(queue.headers.get('content-type')).toBe('application/json');
      expect(mergeQueueSchema.parse(queue.json).enqueuedPullRequests).not.toContain(UNUSABLE_ITEM);
      const body = QUEUE_SHAPES[flavour].parse(queue.json);
      expect(body.branch).toBe(branch);
      seen.queues += 1;
      for (const item of body.enqueuedPullRequests) {
        const pr = await post(simulator, '/getSubmittedPullRequest', {
          repo: ref,
          pr: { number: item.prNumber },
          targetBranch: branch,
          includeTimeline: true,
        });
        expect(pr.status).toBe(200);
        submittedPullRequestSchema.parse(pr.json);
        const detail = SUBMITTED_SHAPES[flavour].parse(pr.json);
        expect(detail).toMatchObject({
          prNumber: item.prNumber,
          isCurrentlySubmittedToQueue: true,
        });
        seen.states.add(detail.state);
        seen.pullRequests += 1;
      }
    }
    let token = '';
    do {
      const page = await post(simulator, '/flaky-tests/list-quarantined-tests', {
        repo: ref,
        org_url_slug: 'acme',
        page_query: { page_size: 50, page_token: token },
      });
      expect(page.status).toBe(200);
      expect(quarantinedTestsPageSchema.parse(page.json).quarantined_tests).not.toContain(
        UNUSABLE_ITEM,
      );
      const body = PAGE_SHAPES[flavour].parse(page.json);
      seen.tests += body.quarantined_tests.length;
      for (const test of body.quarantined_tests) {
        if (test.parent === null || test.file === null || test.classname === null) {
          seen.nullFields += 1;
        }
      }
      token = body.page.next_page_token;
    } while (token !== '');
  }
  return seen;
}

describe('simulator responses', () => {
  for (const flavour of ['documented', 'live'] as const) {
    it(`match the client schemas and the exact ${flavour} shape`, async () => {
      const world = createSimulatorWorld({ seed: 11, flavour });
      const simulator = await startTestSimulator({ world });
      const seen = await checkEveryResponse(simulator, flavour);
      // Again after the world has moved, so other states and readiness values are covered.
      world.advance(DEFAULT_SIMULATOR_START_TIME + 5 * 3600);
      const later = await checkEveryResponse(simulator, flavour);
      expect(seen.queues).toBe(4);
      expect(seen.pullRequests + later.pullRequests).toBeGreaterThan(10);
      expect(seen.tests).toBeGreaterThan(4 * 40);
      expect(seen.states.size + later.states.size).toBeGreaterThan(3);
      if (flavour === 'live') expect(seen.nullFields).toBeGreaterThan(0);
    });
  }

  it('carries X-Request-Id on every response, errors included', async () => {
    const simulator = await startTestSimulator();
    const ids = [
      await post(simulator, '/getQueue', { repo: WEB, targetBranch: 'main' }),
      await post(simulator, '/getQueue', { repo: WEB, targetBranch: 'main' }, { token: null }),
      await post(simulator, '/nope', {}),
    ].map((reply) => reply.headers.get('x-request-id'));
    expect(ids).toEqual(['sim-00000001', 'sim-00000002', 'sim-00000003']);
  });

  it('counts requests per path until reset', async () => {
    const simulator = await startTestSimulator();
    await post(simulator, '/getQueue', { repo: WEB, targetBranch: 'main' });
    await post(simulator, '/getQueue', { repo: WEB, targetBranch: 'main' }, { token: 'x' });
    await post(simulator, '/flaky-tests/list-quarantined-tests', {});
    expect(simulator.requestCounts()).toEqual({
      '/v1/getQueue': 2,
      '/v1/flaky-tests/list-quarantined-tests': 1,
    });
    simulator.resetRequestCounts();
    expect(simulator.requestCounts()).toEqual({});
  });
});

describe('simulator errors', () => {
  it('answers 401 in plain text for a missing or wrong token', async () => {
    const simulator = await startTestSimulator();
    const request = { repo: WEB, targetBranch: 'main' };
    for (const token of [null, '', 'wrong-token']) {
      const reply = await post(simulator, '/getQueue', request, { token });
      expect(reply.status).toBe(401);
      expect(reply.json).toBeUndefined();
      expect(reply.headers.get('content-type')).toMatch(/^text\/plain/);
    }
  });

  it('answers 404 for unknown repositories, branches, organizations, PRs and paths', async () => {
    const simulator = await startTestSimulator();
    const queue = await post(simulator, '/getQueue', { repo: WEB, targetBranch: 'main' });
    const queued = QUEUE_SHAPES.documented.parse(queue.json).enqueuedPullRequests[0];
    if (queued === undefined) throw new Error('empty queue');
    const cases: [string, unknown, RegExp][] = [
      ['/getQueue', { repo: { ...WEB, name: 'nope' }, targetBranch: 'main' }, /acme\/nope/],
      ['/getQueue', { repo: WEB, targetBranch: 'develop' }, /develop/],
      [
        '/getSubmittedPullRequest',
        { repo: { ...WEB, owner: 'other' }, pr: { number: 1 }, targetBranch: 'main' },
        /other\/web/,
      ],
      ['/getSubmittedPullRequest', { repo: API, pr: { number: 1 }, targetBranch: 'x' }, /x/],
      ['/getSubmittedPullRequest', { repo: API, pr: { number: 1 }, targetBranch: 'main' }, /1/],
      [
        '/getSubmittedPullRequest',
        { repo: WEB, pr: { number: queued.prNumber }, targetBranch: 'release' },
        new RegExp(String(queued.prNumber)),
      ],
      [
        '/flaky-tests/list-quarantined-tests',
        { repo: WEB, org_url_slug: 'umbrella', page_query: { page_size: 10 } },
        /umbrella/,
      ],
      [
        '/flaky-tests/list-quarantined-tests',
        {
          repo: { ...WEB, host: 'gitlab.com' },
          org_url_slug: 'acme',
          page_query: { page_size: 10 },
        },
        /gitlab\.com/,
      ],
      ['/getQueues', { repo: WEB, targetBranch: 'main' }, /getQueues/],
    ];
    for (const [path, body, message] of cases) {
      const reply = await post(simulator, path, body);
      expect({ path, body, status: reply.status }).toEqual({ path, body, status: 404 });
      expect(reply.text).toMatch(message);
      expect(reply.headers.get('content-type')).toMatch(/^text\/plain/);
    }
  });

  it('answers 400 naming the field for bad bodies and page sizes', async () => {
    const simulator = await startTestSimulator();
    const list = (pageQuery: unknown) => ({
      repo: WEB,
      org_url_slug: 'acme',
      page_query: pageQuery,
    });
    const cases: [string, unknown, RegExp][] = [
      ['/getQueue', '{not json', /not JSON/],
      ['/getQueue', '', /not JSON/],
      ['/getQueue', [], /\(body\)/],
      ['/getQueue', { repo: WEB }, /targetBranch/],
      [
        '/getQueue',
        { repo: { host: 'github.com', owner: 'acme' }, targetBranch: 'main' },
        /repo\.name/,
      ],
      ['/getSubmittedPullRequest', { repo: WEB, targetBranch: 'main' }, /pr/],
      [
        '/getSubmittedPullRequest',
        { repo: WEB, pr: { number: 'x' }, targetBranch: 'main' },
        /pr\.number/,
      ],
      [
        '/getSubmittedPullRequest',
        { repo: WEB, pr: { number: 1.5 }, targetBranch: 'main' },
        /pr\.number/,
      ],
      [
        '/flaky-tests/list-quarantined-tests',
        { repo: WEB, page_query: { page_size: 5 } },
        /org_url_slug/,
      ],
      ['/flaky-tests/list-quarantined-tests', list(undefined), /page_query/],
      ['/flaky-tests/list-quarantined-tests', list({ page_size: 0 }), /page_query\.page_size/],
      ['/flaky-tests/list-quarantined-tests', list({ page_size: 101 }), /page_query\.page_size/],
      ['/flaky-tests/list-quarantined-tests', list({ page_size: 2.5 }), /page_query\.page_size/],
      ['/flaky-tests/list-quarantined-tests', list({ page_size: 10, page_token: 7 }), /page_token/],
    ];
    for (const [path, body, message] of cases) {
      const reply = await post(simulator, path, body);
      expect({ path, body, status: reply.status }).toEqual({ path, body, status: 400 });
      expect(reply.text).toMatch(message);
      expect(reply.headers.get('content-type')).toMatch(/^text\/plain/);
    }
  });

  it('answers 405 with Allow for other methods', async () => {
    const simulator = await startTestSimulator();
    for (const method of ['GET', 'PUT']) {
      const reply = await post(
        simulator,
        '/getQueue',
        { repo: WEB, targetBranch: 'main' },
        { method },
      );
      expect(reply.status).toBe(405);
      expect(reply.headers.get('allow')).toBe('POST');
    }
  });

  it('moves the world on its own when autoAdvance is set', async () => {
    const world = createSimulatorWorld({ seed: 1 });
    const simulator = await startTestSimulator({
      world,
      autoAdvance: { tickMs: 5, secondsPerTick: 2 },
    });
    const start = simulator.world.now();
    // However late a busy machine runs its first tick.
    await expect.poll(() => simulator.world.now(), { timeout: 10_000 }).toBeGreaterThan(start);
  });
});

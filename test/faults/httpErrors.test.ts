// Error statuses from Trunk and its edge: 5xx bursts (HTML or plain text), 401/403, 404.
import { describe, expect, it } from 'vitest';
import { edgeError } from '../../src/simulator/faults.js';
import { select, sum } from '../support/exposition.js';
import {
  API,
  LEVEL,
  MOBILE,
  WEB,
  callsTo,
  pollFailures,
  startFaultRig,
  until,
  untilUp,
} from './harness.js';

describe('5xx from Trunk or its edge', () => {
  it('retries a short burst within the poll and the target stays up', async () => {
    const rig = await startFaultRig({
      polling: '  mergeQueueIntervalSeconds: 1.5\n  flakyTestsIntervalSeconds: 60',
    });
    await rig.subject.waitUntilReady();
    rig.faults.inject('getQueue', edgeError(502, 'text'), { repo: WEB });
    const before = callsTo(rig.faults, 'getQueue', WEB).length;

    // The next poll: a 502, then a retry after at most base backoff (0.5 s), well inside 1.5 s.
    await until(
      () => callsTo(rig.faults, 'getQueue', WEB).length >= before + 2,
      'the 502 and its retry',
    );
    const [failed, retried] = callsTo(rig.faults, 'getQueue', WEB).slice(before);
    expect([failed?.fault, retried?.fault]).toEqual(['status', undefined]);
    const samples = await rig.subject.waitFor(
      (current) =>
        sum(current, 'trunk_exporter_api_requests_total', { code: '200', endpoint: 'getQueue' }) >=
        before + 1,
      'the retry answered',
    );
    expect(sum(samples, 'trunk_exporter_api_requests_total', { code: '502' })).toBe(1);
    expect(pollFailures(rig.subject, WEB)).toEqual([]);
    await untilUp(rig.subject, {});
  });

  it('after a long burst: target_up 0, last values kept, then dropped after staleAfterSeconds', async () => {
    const rig = await startFaultRig({
      polling:
        '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 60\n  staleAfterSeconds: 1.5',
    });
    await rig.subject.waitUntilReady();
    const web = { repo: WEB, branch: 'main' };
    const healthy = await rig.subject.samples();
    const concurrency = sum(healthy, 'trunk_merge_queue_concurrency', web);
    const pullRequests = select(healthy, 'trunk_merge_queue_pull_requests', web);
    expect(concurrency).toBeGreaterThan(0);
    // Each poll fails through every kind of 5xx body in turn.
    for (const status of [500, 502, 503, 504] as const) {
      for (const form of ['html', 'text'] as const) {
        rig.faults.inject('getQueue', edgeError(status, form), { repo: WEB, times: 1000 });
      }
    }

    const failing = await rig.subject.waitFor(
      (current) => sum(current, 'trunk_exporter_target_up', web) === 0,
      'web down',
    );
    expect(sum(failing, 'trunk_merge_queue_concurrency', web)).toBe(concurrency);
    expect(select(failing, 'trunk_merge_queue_pull_requests', web)).toEqual(pullRequests);
    await untilUp(rig.subject, { repo: API });

    const stale = await rig.subject.waitFor(
      (current) => select(current, 'trunk_merge_queue_concurrency', web).length === 0,
      'web data dropped as stale',
    );
    expect(select(stale, 'trunk_merge_queue_pull_requests', web)).toEqual([]);
    expect(sum(stale, 'trunk_merge_queue_concurrency', { repo: API })).toBeGreaterThan(0);

    const failures = pollFailures(rig.subject, WEB);
    // An edge page is logged as its text: no markup, status and title kept.
    expect(failures[0]?.msg).toMatch(/HTTP 5\d\d: "5\d\d [A-Za-z ]+ 5\d\d [A-Za-z ]+ edge"/);
    for (const record of failures) expect(record.msg).not.toMatch(/<\/?[a-z]+>/);
    // Never more than the client's 4 attempts per poll (how many fit in 0.2 s depends on the
    // backoff's draw; the short-burst test shows a retry within the budget).
    const calls = callsTo(rig.faults, 'getQueue', WEB).filter((call) => call.fault === 'status');
    expect(calls.length).toBeGreaterThanOrEqual(failures.length);
    expect(calls.length).toBeLessThanOrEqual(4 * (failures.length + 1));
  });
});

describe('401 and 403', () => {
  it('one clear line per failed poll, naming the target and what to check; no retries; others unaffected', async () => {
    const rig = await startFaultRig({
      targets: [
        `  - repo: ${WEB}`,
        '    branches: [main]',
        `  - repo: ${API}`,
        '    branches: [main]',
        `  - repo: ${MOBILE}`,
        '    branches: [develop]',
      ].join('\n'),
    });
    await rig.subject.waitUntilReady();
    const rejected = { kind: 'status', status: 401, body: 'invalid API token' } as const;
    const forbidden = { kind: 'status', status: 403, body: 'forbidden' } as const;
    rig.faults.inject('getQueue', rejected, { repo: WEB, times: Infinity });
    rig.faults.inject('getQueue', forbidden, { repo: MOBILE, times: Infinity });

    await until(
      () =>
        pollFailures(rig.subject, WEB).length >= 4 && pollFailures(rig.subject, MOBILE).length >= 4,
      'four failed polls of each',
    );
    const samples = await rig.subject.samples();
    rig.faults.clear();

    for (const [repo, branch, status] of [
      [WEB, 'main', 401],
      [MOBILE, 'develop', 403],
    ] as const) {
      const lines = pollFailures(rig.subject, repo);
      // Not retried: one call per poll (one more poll may be under way).
      const calls = callsTo(rig.faults, 'getQueue', repo).filter((c) => c.fault === 'status');
      expect(calls.length).toBeLessThanOrEqual(lines.length + 1);
      for (const line of lines) {
        expect(line.level).toBe(LEVEL.error);
        expect(line.status).toBe(status);
        expect(line.branch).toBe(branch);
        expect(line.msg).toContain(`${repo} branch ${branch}`);
      }
      // At most once per interval (0.2 s, jitter ±10 %, so polls start >= 0.18 s apart); one more
      // for a line delayed by a slow first poll.
      const spanMs = Date.parse(lines.at(-1)?.time ?? '') - Date.parse(lines[0]?.time ?? '');
      expect(lines.length).toBeLessThanOrEqual(Math.floor(spanMs / 180) + 2);
    }
    expect(pollFailures(rig.subject, WEB)[0]?.check).toBe(
      'Trunk rejected the API token: check trunk.token, trunk.tokenFile or TRUNK_API_TOKEN ' +
        '(a rotated token invalidates the old one at once)',
    );
    expect(pollFailures(rig.subject, MOBILE)[0]?.msg).toContain(
      `Trunk refused access to ${MOBILE}: check that the API token belongs to the organization that owns it`,
    );
    await untilUp(rig.subject, { repo: API });
    expect(sum(samples, 'trunk_exporter_target_up', { repo: WEB })).toBe(0);
    expect(sum(samples, 'trunk_exporter_target_up', { repo: MOBILE })).toBe(0);
    expect(pollFailures(rig.subject, API)).toEqual([]);
  });
});

describe('404', () => {
  it('an unknown repository or branch: target_up 0 and a line saying which and what to check', async () => {
    const rig = await startFaultRig({
      targets: [
        `  - repo: ${WEB}`,
        '    branches: [main, no-such-branch]',
        '  - repo: github.com/acme/no-such-repo',
        '    branches: [main]',
        '    flakyTests: true',
      ].join('\n'),
    });
    await rig.subject.waitUntilReady();
    const samples = await rig.subject.samples();

    expect(
      select(samples, 'trunk_exporter_target_up').map((s) => [
        s.labels.repo,
        s.labels.branch,
        s.labels.kind,
        s.value,
      ]),
    ).toEqual([
      [WEB, 'main', 'merge_queue', 1],
      [WEB, 'no-such-branch', 'merge_queue', 0],
      ['github.com/acme/no-such-repo', 'main', 'merge_queue', 0],
      ['github.com/acme/no-such-repo', '', 'flaky_tests', 0],
    ]);
    const branchLine = pollFailures(rig.subject, WEB).find((r) => r.branch === 'no-such-branch');
    expect(branchLine?.msg).toContain(
      `check that ${WEB} exists in Trunk and has a merge queue for branch no-such-branch`,
    );
    const listLine = pollFailures(rig.subject, 'github.com/acme/no-such-repo', 'flaky_tests')[0];
    expect(listLine?.msg).toContain('HTTP 404');
    expect(listLine?.check).toBe(
      'check that github.com/acme/no-such-repo exists in Trunk and that trunk.orgUrlSlug names its organization',
    );
  });

  it('a PR that leaves the queue between getQueue and getSubmittedPullRequest is not an error', async () => {
    // Recheck 0: every PR is looked up on every poll, so the injected 404 meets a lookup at once
    // instead of waiting for a PR's recheck.
    const rig = await startFaultRig({
      targets: `  - repo: ${API}\n    branches: [main]`,
      polling:
        '  mergeQueueIntervalSeconds: 0.3\n  flakyTestsIntervalSeconds: 60\n  pullRequestRecheckSeconds: 0',
    });
    await rig.subject.waitUntilReady();
    const queue = rig.world.getQueue({ host: 'github.com', owner: 'acme', name: 'api' }, 'main');
    if (!queue.ok) throw new Error(queue.message);
    const enqueued = queue.body.enqueuedPullRequests.length;
    expect(enqueued).toBeGreaterThan(1);
    const gone = { kind: 'status', status: 404, body: 'pull request was not submitted' } as const;
    rig.faults.inject('getSubmittedPullRequest', gone);

    await until(
      () => rig.faults.calls().some((call) => call.fault === 'status'),
      'the lookup answered 404',
    );
    const samples = await rig.subject.waitFor(
      (current) => sum(current, 'trunk_merge_queue_pull_requests') === enqueued - 1,
      'one PR fewer',
    );
    await untilUp(rig.subject, { repo: API });
    expect(sum(samples, 'trunk_exporter_api_requests_total', { code: '404' })).toBe(1);
    expect(pollFailures(rig.subject, API)).toEqual([]);
    // The next poll finds it again: the world still has it.
    await rig.subject.waitFor(
      (current) => sum(current, 'trunk_merge_queue_pull_requests') === enqueued,
      'the PR back',
    );
  });
});

// The webhook endpoint end to end: a real exporter polling a real simulator, sent real signed
// requests over loopback, its answers, counters and polls checked from outside.
import { readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { select, sum } from '../support/exposition.js';
import { configYaml, startFrozenSimulator, startTestExporter } from '../support/exporterHarness.js';
import { WEB, startWebhookExporter, webhookResults } from '../support/webhookExporter.js';
import {
  OTHER_WEBHOOK_SECRET,
  WEBHOOK_SECRET,
  datedNow,
  hmacSignature,
  postWebhook,
  postWebhookLines,
  signedHeaders,
  slowPost,
  svixSignature,
} from '../support/webhooks.js';

const FIXTURES = join(import.meta.dirname, '..', 'trunk', 'fixtures', 'webhooks');
/** bcrypt of "secret" at cost 4. */
const BCRYPT_HASH = '$2b$04$bCC77X2SvWaC134HlQkkQO.d5RAyugleVPV61W1BVOBhOA/1QKyfy';
const GET_QUEUE = '/v1/getQueue';
const LIST_QUARANTINED = '/v1/flaky-tests/list-quarantined-tests';

/** A fixture's body, its event dated now (datedNow). */
function fixtureText(name: string): string {
  return datedNow(JSON.stringify(JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8'))));
}

/** A merge-queue event for acme/web (main unless told), as Trunk sends it. */
function pullRequestEvent(type: string, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({
    action: type.split('.')[1],
    pr_number: 42,
    repository: { host: 'github.com', owner: 'acme', name: 'web' },
    target_branch: 'main',
    status: type.split('.')[1],
    timestamp: new Date().toISOString(),
    type,
    ...overrides,
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ALICE = { authorization: `Basic ${Buffer.from('alice:secret').toString('base64')}` };
const results = webhookResults;

describe('POST /webhooks/trunk', () => {
  it('accepts an event signed by svix, counts it by type and failure reason, and shows it', async () => {
    const { test, post } = await startWebhookExporter();
    expect(await results(test)).toEqual({
      accepted: 0,
      duplicate: 0,
      ignored: 0,
      unrecognized: 0,
      unsigned: 0,
      invalid_signature: 0,
      malformed: 0,
      too_large: 0,
      busy: 0,
      timeout: 0,
      method_not_allowed: 0,
    });
    expect(await post(fixtureText('pull-request-failed'))).toEqual({ status: 204, text: '' });

    const samples = await test.samples();
    expect(sum(samples, 'trunk_exporter_webhook_requests_total', { result: 'accepted' })).toBe(1);
    expect(
      select(samples, 'trunk_merge_queue_webhook_events_total').map((s) => [s.labels, s.value]),
    ).toEqual([[{ repo: WEB, branch: 'main', event: 'pull_request.failed' }, 1]]);
    expect(
      select(samples, 'trunk_merge_queue_pull_requests_failed_total').map((s) => [
        s.labels,
        s.value,
      ]),
    ).toEqual([[{ repo: WEB, branch: 'main', reason: 'TEST_RUN_REQUIRED_STATUS_FAILED' }, 1]]);
    const page = await test.scrape('/');
    expect(page).toContain('Webhooks are received at POST <code>/webhooks/trunk</code>');
    expect(page).toContain('<code>pull_request.failed</code>');
  });

  it('accepts an event signed by an independent HMAC-SHA256, and the flaky-test events', async () => {
    const { test, post } = await startWebhookExporter();
    const independent = (body: string) => post(body, signedHeaders(body, { sign: hmacSignature }));
    for (const name of [
      'test-case-status-changed-v2',
      'test-case-monitor-status-changed',
      'test-case-quarantining-setting-changed-changelog-example',
    ]) {
      expect((await independent(fixtureText(name))).status).toBe(204);
    }
    const samples = await test.samples();
    expect(sum(samples, 'trunk_exporter_webhook_requests_total', { result: 'accepted' })).toBe(3);
    expect(
      sum(samples, 'trunk_flaky_tests_status_changes_total', {
        repo: WEB,
        from: 'healthy',
        to: 'flaky',
      }),
    ).toBe(1);
    expect(
      sum(samples, 'trunk_flaky_tests_monitor_events_total', {
        repo: WEB,
        monitor_type: 'pass_on_retry',
        status: 'active',
      }),
    ).toBe(1);
    expect(
      sum(samples, 'trunk_flaky_tests_quarantine_setting_changes_total', {
        repo: WEB,
        setting: 'NEVER_QUARANTINE',
      }),
    ).toBe(1);
  });

  it('answers 401 unsigned to missing, malformed or stale headers, apart from a wrong signature', async () => {
    const { test, url, post } = await startWebhookExporter();
    const body = pullRequestEvent('pull_request.merged');
    const now = Math.floor(Date.now() / 1000);
    const unsigned = await postWebhook(url, body, { 'content-type': 'application/json' });
    expect(unsigned.status).toBe(401);
    expect(unsigned.text).toContain('missing or malformed signature headers');
    const notASignature = { ...signedHeaders(body), 'svix-signature': 'not a signature' };
    expect((await post(body, notASignature)).status).toBe(401);
    // Signed correctly, but 70 s old with a tolerance of 60 s (well within the library's own 300 s,
    // so only the exporter's check refuses it); and as far in the future.
    expect((await post(body, signedHeaders(body, { timestamp: now - 70 }))).status).toBe(401);
    expect((await post(body, signedHeaders(body, { timestamp: now + 70 }))).status).toBe(401);
    expect(await results(test)).toMatchObject({ unsigned: 4, invalid_signature: 0 });

    const wrongSecret = await post(body, signedHeaders(body, { secret: OTHER_WEBHOOK_SECRET }));
    expect(wrongSecret).toEqual({ status: 401, text: 'no signature matches the signing secret\n' });
    // The body signed is not the body sent.
    const tampered = signedHeaders(body);
    expect((await post(body.replace('"pr_number":42', '"pr_number":43'), tampered)).status).toBe(
      401,
    );
    expect(await results(test)).toMatchObject({ unsigned: 4, invalid_signature: 2, accepted: 0 });
    expect(select(await test.samples(), 'trunk_merge_queue_webhook_events_total')).toEqual([]);
  });

  it('counts a signed message whose timestamp passes 5 minutes while its body arrives as unsigned, not as a forgery', async () => {
    // Svix's library refuses a timestamp more than five minutes from its clock, and verifies after
    // the body: 298 s old when its headers come, 301 s or more once its 30 bytes have trickled in.
    const { test, url } = await startWebhookExporter({ toleranceSeconds: 300 });
    const body = ' '.repeat(30);
    const headers = signedHeaders(body, { timestamp: Math.floor(Date.now() / 1000) - 298 });
    const answer = await slowPost(url, headers, { announcedBytes: 30, chunkBytes: 1 });
    expect(answer.status).toBe(401);
    // Answered once the whole body was read: the header check had let it in.
    expect(answer.sentBytes).toBeGreaterThanOrEqual(30);
    expect(await results(test)).toMatchObject({ unsigned: 1, invalid_signature: 0 });
  });

  it('answers 400 to a signed body that is not JSON, and 204 to any JSON it cannot use', async () => {
    const { test, post } = await startWebhookExporter();
    expect(await post('not json')).toEqual({ status: 400, text: 'body is not JSON\n' });
    for (const body of ['[]', 'null', '7', '{"type":"not an event type"}']) {
      expect((await post(body)).status).toBe(204);
    }
    expect(await results(test)).toMatchObject({ malformed: 1, unrecognized: 4, accepted: 0 });
  });

  it('accepts a rotation header whose second signature is the valid one', async () => {
    const { test, post } = await startWebhookExporter();
    const body = pullRequestEvent('pull_request.queued');
    const id = 'msg_rotation';
    const timestamp = Math.floor(Date.now() / 1000);
    const old = svixSignature(OTHER_WEBHOOK_SECRET, id, timestamp, body);
    const current = hmacSignature(WEBHOOK_SECRET, id, timestamp, body);
    const headers = {
      ...signedHeaders(body, { id, timestamp }),
      'svix-signature': `${old} ${current}`,
    };
    expect((await post(body, headers)).status).toBe(204);
    const onlyOld = { ...headers, 'svix-id': 'msg_rotation_2', 'svix-signature': old };
    expect((await post(body, onlyOld)).status).toBe(401);
    expect(await results(test)).toMatchObject({ accepted: 1, invalid_signature: 1 });
  });

  it('reads a header repeated on several lines as a proxy sends it: signatures together, one id', async () => {
    const { test, url } = await startWebhookExporter();
    const fixture = JSON.parse(fixtureText('webhook-signature-on-repeated-header-lines')) as object;
    const timestamp = Math.floor(Date.now() / 1000);
    /**
     * Sends the event of PR `prNumber` with the headers `lines` makes of its signatures for
     * `signedId` by the old and the current secret.
     */
    const send = (
      prNumber: number,
      signedId: string,
      lines: (old: string, current: string) => Record<string, string | string[]>,
    ) => {
      const body = JSON.stringify({ ...fixture, pr_number: prNumber });
      return postWebhookLines(url, body, {
        'content-type': 'application/json',
        'svix-id': signedId,
        'svix-timestamp': String(timestamp),
        ...lines(
          svixSignature(OTHER_WEBHOOK_SECRET, signedId, timestamp, body),
          hmacSignature(WEBHOOK_SECRET, signedId, timestamp, body),
        ),
      });
    };
    const accepted = { status: 204, text: '' };
    expect(
      await send(1, 'msg_lines_1', (old, current) => ({ 'svix-signature': [old, current] })),
    ).toEqual(accepted);
    // The svix library splits on each space, so a run of them is no malformed header.
    expect(
      await send(2, 'msg_lines_2', (old, current) => ({ 'svix-signature': `${old}  ${current}` })),
    ).toEqual(accepted);
    expect(
      await send(3, 'msg_lines_3', (_old, current) => ({
        'svix-id': ['msg_lines_3', 'msg_lines_3'],
        'svix-signature': current,
      })),
    ).toEqual(accepted);
    // Two ids cannot both be the message's: no signature is checked, and no secret is blamed.
    const twoIds = await send(4, 'msg_lines_4', (_old, current) => ({
      'svix-id': ['msg_lines_4', 'msg_lines_5'],
      'svix-signature': current,
    }));
    expect(twoIds.status).toBe(401);
    expect(await results(test)).toMatchObject({ accepted: 3, unsigned: 1, invalid_signature: 0 });
    expect(
      sum(await test.samples(), 'trunk_merge_queue_webhook_events_total', {
        event: 'pull_request.queued',
      }),
    ).toBe(3);
  });

  it('verifies an encoded body as the JSON it decodes to, never past 1 MiB of it', async () => {
    // Svix signs the JSON; a compressing sender or proxy changes only the bytes on the wire.
    const { test, url } = await startWebhookExporter();
    const fixture = JSON.parse(fixtureText('webhook-gzip-encoded-body')) as object;
    const encoded = (encoding: string, wire: (json: string) => Buffer, prNumber: number) => {
      const body = JSON.stringify({ ...fixture, pr_number: prNumber });
      return postWebhookLines(url, wire(body), {
        ...signedHeaders(body),
        'content-encoding': encoding,
      });
    };
    const accepted = { status: 204, text: '' };
    expect(await encoded('gzip', (json) => gzipSync(json), 501)).toEqual(accepted);
    expect(await encoded('br', (json) => brotliCompressSync(json), 502)).toEqual(accepted);
    expect(await encoded('identity', (json) => Buffer.from(json), 503)).toEqual(accepted);
    // 2 MiB of JSON in about 2 KiB of gzip: refused as it inflates past 1 MiB.
    const inflated = `{"type":"pull_request.merged","padding":"${' '.repeat(2 * 1024 * 1024)}"}`;
    const bomb = await postWebhookLines(url, gzipSync(inflated), {
      ...signedHeaders(inflated),
      'content-encoding': 'gzip',
    });
    expect(bomb.status).toBe(413);
    const notGzip = await encoded('gzip', (json) => Buffer.from(json), 504);
    expect(notGzip.status).toBe(400);
    const unknownCoding = await encoded('compress', (json) => Buffer.from(json), 505);
    expect(unknownCoding.status).toBe(415);

    expect(await results(test)).toMatchObject({
      accepted: 3,
      too_large: 1,
      malformed: 2,
      invalid_signature: 0,
    });
    expect(
      sum(await test.samples(), 'trunk_merge_queue_pull_requests_failed_total', {
        reason: 'TEST_RUN_REQUIRED_STATUS_FAILED',
      }),
    ).toBe(3);
  });

  it('answers a replayed svix-id 204 without counting the event again', async () => {
    const { test, post } = await startWebhookExporter();
    const body = pullRequestEvent('pull_request.merged');
    const headers = signedHeaders(body, { id: 'msg_replayed' });
    expect((await post(body, headers)).status).toBe(204);
    expect((await post(body, headers)).status).toBe(204);
    const samples = await test.samples();
    expect(await results(test)).toMatchObject({ accepted: 1, duplicate: 1 });
    expect(sum(samples, 'trunk_merge_queue_webhook_events_total')).toBe(1);
  });

  it('answers the same transition under a new svix-id 204 duplicate: one exit, one failure', async () => {
    // Trunk sending one pull request's failure twice, each time as a new message: the type, pull
    // request, queue and timestamp say it is the same transition.
    const { test, post } = await startWebhookExporter();
    const failedAt = Date.now();
    const body = pullRequestEvent('pull_request.failed', {
      failure_reason: 'TEST_RUN_TIMEOUT',
      timestamp: new Date(failedAt).toISOString(),
    });
    expect((await post(body, signedHeaders(body, { id: 'msg_first' }))).status).toBe(204);
    expect((await post(body, signedHeaders(body, { id: 'msg_second' }))).status).toBe(204);
    // A later failure of the same pull request is another transition.
    const later = pullRequestEvent('pull_request.failed', {
      failure_reason: 'TEST_RUN_TIMEOUT',
      timestamp: new Date(failedAt + 1000).toISOString(),
    });
    expect((await post(later, signedHeaders(later, { id: 'msg_third' }))).status).toBe(204);
    const samples = await test.samples();
    expect(await results(test)).toMatchObject({ accepted: 2, duplicate: 1 });
    expect(
      sum(samples, 'trunk_merge_queue_pull_requests_failed_total', { reason: 'TEST_RUN_TIMEOUT' }),
    ).toBe(2);
    expect(sum(samples, 'trunk_merge_queue_webhook_events_total')).toBe(2);
  });

  it('counts an event dated before the exporter started (Svix redelivering after a restart) only as received', async () => {
    // Svix retries for about a day what a stopped exporter did not take: events of the hour before
    // the start arrive once it polls. None of them is a failure, an exit or an eviction it watched.
    const { test, post } = await startWebhookExporter();
    const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000).toISOString();
    const conflict = { failure_reason: 'START_TEST_RUN_MERGE_CONFLICT' };
    const before = [
      pullRequestEvent('pull_request.failed', {
        pr_number: 9001,
        ...conflict,
        timestamp: minutesAgo(10),
      }),
      pullRequestEvent('pull_request.merged', { pr_number: 9002, timestamp: minutesAgo(20) }),
      pullRequestEvent('pull_request.canceled', { pr_number: 9003, timestamp: minutesAgo(40) }),
    ];
    for (const body of before) expect((await post(body)).status).toBe(204);
    // Its failure after the start is the first the exporter sees of that pull request: no loop.
    const after = pullRequestEvent('pull_request.failed', {
      pr_number: 9001,
      ...conflict,
      timestamp: new Date().toISOString(),
    });
    expect((await post(after)).status).toBe(204);

    const samples = await test.samples();
    expect(await results(test)).toMatchObject({ accepted: 4 });
    expect(sum(samples, 'trunk_merge_queue_webhook_events_total')).toBe(4);
    expect(
      select(samples, 'trunk_merge_queue_pull_requests_failed_total').map((s) => [
        s.labels.reason,
        s.value,
      ]),
    ).toEqual([['START_TEST_RUN_MERGE_CONFLICT', 1]]);
    const exited = (outcome: string) =>
      sum(samples, 'trunk_merge_queue_pull_requests_exited_total', { outcome });
    expect([exited('failed'), exited('merged'), exited('cancelled')]).toEqual([1, 0, 0]);
    expect(sum(samples, 'trunk_merge_queue_repeated_failures_total')).toBe(0);
  });

  it('accepts and ignores an event for a repository or branch that is not a target', async () => {
    const { test, post } = await startWebhookExporter();
    const otherRepo = pullRequestEvent('pull_request.merged', {
      repository: { host: 'github.com', owner: 'acme', name: 'elsewhere' },
    });
    const otherBranch = pullRequestEvent('pull_request.merged', { target_branch: 'release' });
    expect((await post(otherRepo)).status).toBe(204);
    expect((await post(otherBranch)).status).toBe(204);
    expect(await results(test)).toMatchObject({ ignored: 2, accepted: 0 });
    expect(select(await test.samples(), 'trunk_merge_queue_webhook_events_total')).toEqual([]);
  });

  it('answers 413 at once to a body announced over 1 MiB, and to one that streams past it', async () => {
    const { test, url } = await startWebhookExporter();
    const headers = signedHeaders('{}');
    const announced = await slowPost(url, headers, {
      announcedBytes: 2 * 1024 * 1024,
      chunkBytes: 1024,
    });
    expect(announced.status).toBe(413);
    // Answered from the headers: before the trickle could have sent a tenth of the body.
    expect(announced.sentBytes).toBeLessThan(200 * 1024);
    const streamed = await slowPost(url, signedHeaders('{}'), { chunkBytes: 256 * 1024 });
    expect(streamed.status).toBe(413);
    expect(streamed.sentBytes).toBeLessThanOrEqual(1024 * 1024 + 256 * 1024);
    expect(await results(test)).toMatchObject({ too_large: 2 });
  });

  it('answers at its path with a trailing slash too, as the other paths are, and nowhere else', async () => {
    // An endpoint URL pasted into Svix with a slash at its end.
    const { test, url } = await startWebhookExporter();
    const body = fixtureText('webhook-to-path-with-trailing-slash');
    expect(await postWebhook(`${url}/`, body, signedHeaders(body))).toEqual({
      status: 204,
      text: '',
    });
    expect((await postWebhook(`${url}//`, body, signedHeaders(body))).status).toBe(404);
    expect((await postWebhook(`${url}/x`, body, signedHeaders(body))).status).toBe(404);
    expect(await results(test)).toMatchObject({ accepted: 1, duplicate: 0 });
    expect(
      sum(await test.samples(), 'trunk_merge_queue_webhook_events_total', {
        event: 'pull_request.merged',
      }),
    ).toBe(1);
  });

  it('answers 405 to other methods, and counts them', async () => {
    const { test, url } = await startWebhookExporter();
    for (const method of ['GET', 'PUT']) {
      const response = await fetch(url, { method });
      expect(response.status).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
    }
    expect(await results(test)).toMatchObject({ method_not_allowed: 2 });
  });

  it('is not behind basic auth, which still guards /metrics', async () => {
    const { test, post } = await startWebhookExporter({
      server: `  basicAuthUsers:\n    alice: "${BCRYPT_HASH}"`,
      auth: ALICE,
    });
    expect((await post(pullRequestEvent('pull_request.testing'))).status).toBe(204);
    expect((await fetch(`${test.exporter.url}/metrics`)).status).toBe(401);
    expect(await results(test, ALICE)).toMatchObject({ accepted: 1 });
  });

  it("polls the event's queue after the event, once for a burst of events", async () => {
    const { simulator, post } = await startWebhookExporter();
    expect(simulator.requestCounts()[GET_QUEUE] ?? 0).toBe(0);
    const answers = await Promise.all(
      ['submitted', 'queued', 'testing', 'merged', 'failed'].map((action, index) =>
        post(pullRequestEvent(`pull_request.${action}`, { pr_number: 100 + index })),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([204, 204, 204, 204, 204]);
    // 250 ms on (test/webhooks/pollTriggers.test.ts pins the time on fake timers), however long a
    // busy machine takes here; one for the burst, and no other for 5 s.
    await vi.waitFor(
      () => {
        expect(simulator.requestCounts()[GET_QUEUE] ?? 0).toBeGreaterThan(0);
      },
      { timeout: 10_000, interval: 20 },
    );
    expect(simulator.requestCounts()[GET_QUEUE]).toBe(1);
    // Another event right after the poll waits for the 5 s spacing: no second poll yet.
    expect((await post(pullRequestEvent('pull_request.merged', { pr_number: 200 }))).status).toBe(
      204,
    );
    await sleep(1500);
    expect(simulator.requestCounts()[GET_QUEUE]).toBe(1);
  });

  it('walks the quarantine list after a flaky-test event, at most once a minute', async () => {
    const { simulator, test, post } = await startWebhookExporter();
    const lastWalk = () =>
      test.exporter.store.statuses().find((status) => status.target.kind === 'flaky_tests')
        ?.lastSuccessAt;
    const before = lastWalk();
    expect(simulator.requestCounts()[LIST_QUARANTINED] ?? 0).toBe(0);
    expect((await post(fixtureText('test-case-status-changed-v2'))).status).toBe(204);
    await vi.waitFor(
      () => {
        expect(lastWalk()).not.toBe(before);
      },
      { timeout: 10_000, interval: 20 },
    );
    const walked = simulator.requestCounts()[LIST_QUARANTINED] ?? 0;
    expect(walked).toBeGreaterThan(0);
    expect((await post(fixtureText('test-case-monitor-status-changed'))).status).toBe(204);
    await sleep(1000);
    expect(simulator.requestCounts()[LIST_QUARANTINED]).toBe(walked);
  });

  it('is turned on, re-keyed and turned off by a reload', async () => {
    const { simulator } = await startFrozenSimulator();
    const file = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-webhooks-')), 'config.yaml');
    const yaml = (webhooks: string) =>
      `${configYaml({ apiUrl: simulator.baseUrl, targets: `  - repo: ${WEB}\n    branches: [main]` })}\n${webhooks}`;
    const enabled = (secret: string) =>
      yaml(`webhooks:\n  enabled: true\n  path: /hooks\n  signingSecret: ${secret}`);
    await writeFile(file, yaml(''));
    const test = await startTestExporter(yaml(''), 'info', file);
    const url = `${test.exporter.url}/hooks`;
    const body = pullRequestEvent('pull_request.merged');
    // Off: the path is not served.
    expect((await postWebhook(url, body, signedHeaders(body))).status).toBe(404);

    await writeFile(file, enabled(WEBHOOK_SECRET));
    expect((await test.exporter.reload('SIGHUP')).applied).toBe(true);
    expect((await postWebhook(url, body, signedHeaders(body))).status).toBe(204);

    await writeFile(file, enabled(OTHER_WEBHOOK_SECRET));
    expect((await test.exporter.reload('SIGHUP')).applied).toBe(true);
    const old = pullRequestEvent('pull_request.queued');
    expect((await postWebhook(url, old, signedHeaders(old))).status).toBe(401);
    const rotated = signedHeaders(old, { secret: OTHER_WEBHOOK_SECRET });
    expect((await postWebhook(url, old, rotated)).status).toBe(204);

    await writeFile(file, yaml(''));
    expect((await test.exporter.reload('SIGHUP')).applied).toBe(true);
    expect((await postWebhook(url, old, rotated)).status).toBe(404);
    // The log of the reloads names what changed, never the secret.
    expect(test.logs()).not.toContain(OTHER_WEBHOOK_SECRET.slice('whsec_'.length, 20));
  });
});

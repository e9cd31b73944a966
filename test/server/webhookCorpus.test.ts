// The regression corpus of webhook bodies (test/trunk/fixtures/webhooks/webhook-*.json), each sent
// to a real exporter over loopback, signed once by the svix library and once by the HMAC written
// in test/support/webhooks.ts: what it is answered and what it counts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { select, sum, type Sample } from '../support/exposition.js';
import { WEB, startWebhookExporter, webhookResults } from '../support/webhookExporter.js';
import { datedNow, hmacSignature, signedHeaders, svixSignature } from '../support/webhooks.js';

const FIXTURES = join(import.meta.dirname, '..', 'trunk', 'fixtures', 'webhooks');

/** A corpus body, its event dated now (datedNow): the corpus pins shapes, not dates. */
function fixtureText(name: string): string {
  return datedNow(readFileSync(join(FIXTURES, `${name}.json`), 'utf8'));
}

const SIGNERS = [
  ['svix', svixSignature],
  ['an HMAC written here', hmacSignature],
] as const;

/** The series of `name` as [labels, value] pairs. */
function series(samples: readonly Sample[], name: string) {
  return select(samples, name).map((sample) => [sample.labels, sample.value]);
}

/** null and "" are absent values, not odd ones. */
function expectNoAnomaly(samples: readonly Sample[]): void {
  expect(sum(samples, 'trunk_exporter_api_anomalies_total', { endpoint: 'webhook' })).toBe(0);
}

interface Case {
  readonly name: string;
  readonly status: number;
  readonly result: string;
  /**
   * A pull request event with its number and timestamp: the second delivery, under another id, is
   * the same transition, answered 204 `duplicate`.
   */
  readonly sameTransition?: true;
  /** What two deliveries of it (two ids) must have counted. */
  readonly counts: (samples: readonly Sample[]) => void;
}

const CASES: readonly Case[] = [
  {
    name: 'webhook-unknown-type',
    status: 204,
    result: 'unrecognized',
    counts: (samples) => {
      expect(series(samples, 'trunk_exporter_webhook_unrecognized_events_total')).toEqual([
        [{ type: 'pull_request_test_summary.completed' }, 2],
      ]);
      expect(select(samples, 'trunk_merge_queue_webhook_events_total')).toEqual([]);
    },
  },
  {
    name: 'webhook-null-batched',
    status: 204,
    result: 'accepted',
    sameTransition: true,
    counts: (samples) => {
      expectNoAnomaly(samples);
      expect(series(samples, 'trunk_merge_queue_webhook_events_total')).toEqual([
        [{ repo: WEB, branch: 'main', event: 'pull_request.merged' }, 1],
      ]);
    },
  },
  {
    name: 'webhook-null-timestamp',
    status: 204,
    result: 'accepted',
    counts: (samples) => {
      expectNoAnomaly(samples);
      expect(series(samples, 'trunk_merge_queue_webhook_events_total')).toEqual([
        [{ repo: WEB, branch: 'main', event: 'pull_request.testing' }, 2],
      ]);
    },
  },
  {
    name: 'webhook-timestamp-without-zone',
    status: 204,
    result: 'accepted',
    counts: (samples) => {
      expect(series(samples, 'trunk_merge_queue_webhook_events_total')).toEqual([
        [{ repo: WEB, branch: 'main', event: 'pull_request.queued' }, 2],
      ]);
      expect(
        sum(samples, 'trunk_exporter_api_anomalies_total', {
          endpoint: 'webhook',
          kind: 'invalid_field',
        }),
      ).toBe(2);
    },
  },
  {
    name: 'webhook-empty-failure-reason',
    status: 204,
    result: 'accepted',
    sameTransition: true,
    counts: (samples) => {
      expectNoAnomaly(samples);
      expect(series(samples, 'trunk_merge_queue_pull_requests_failed_total')).toEqual([
        [{ repo: WEB, branch: 'main', reason: 'unknown' }, 1],
      ]);
      // The exit counts too, at the event's own time.
      expect(sum(samples, 'trunk_merge_queue_pull_requests_exited_total', { repo: WEB })).toBe(1);
    },
  },
  {
    name: 'webhook-without-pr-number',
    status: 204,
    result: 'accepted',
    counts: (samples) => {
      expect(series(samples, 'trunk_merge_queue_webhook_events_total')).toEqual([
        [{ repo: WEB, branch: 'main', event: 'pull_request.merged' }, 2],
      ]);
      expect(
        sum(samples, 'trunk_exporter_api_anomalies_total', {
          endpoint: 'webhook',
          kind: 'missing_field',
        }),
      ).toBe(2);
    },
  },
  {
    name: 'webhook-empty-previous-status',
    status: 204,
    result: 'accepted',
    counts: (samples) => {
      expectNoAnomaly(samples);
      expect(series(samples, 'trunk_flaky_tests_status_changes_total')).toEqual([
        [{ repo: WEB, from: 'unknown', to: 'broken' }, 2],
      ]);
    },
  },
  {
    name: 'webhook-v1-status-changed',
    status: 204,
    result: 'accepted',
    counts: (samples) => {
      expect(series(samples, 'trunk_flaky_tests_status_changes_total')).toEqual([
        [{ repo: WEB, from: 'healthy', to: 'flaky' }, 2],
      ]);
    },
  },
  {
    name: 'webhook-investigation-completed',
    status: 204,
    result: 'accepted',
    counts: (samples) => {
      expect(series(samples, 'trunk_flaky_tests_investigations_completed_total')).toEqual([
        [{ repo: WEB }, 2],
      ]);
    },
  },
  {
    name: 'webhook-status-changed-repository-not-a-repository-url',
    status: 204,
    result: 'ignored',
    counts: (samples) => {
      expect(select(samples, 'trunk_flaky_tests_status_changes_total')).toEqual([]);
      expect(
        sum(samples, 'trunk_exporter_api_anomalies_total', {
          endpoint: 'webhook',
          kind: 'invalid_field',
        }),
      ).toBe(2);
    },
  },
  {
    name: 'webhook-deeply-nested',
    status: 400,
    result: 'malformed',
    counts: (samples) => {
      expect(select(samples, 'trunk_merge_queue_webhook_events_total')).toEqual([]);
    },
  },
];

describe('the webhook corpus through POST /webhooks/trunk', () => {
  it.each(CASES)('$name: $status, counted as $result', async (corpusCase) => {
    const { name, status, result, counts } = corpusCase;
    const { test, post } = await startWebhookExporter();
    const body = fixtureText(name);
    for (const [signer, sign] of SIGNERS) {
      expect((await post(body, signedHeaders(body, { sign }))).status, signer).toBe(status);
    }
    expect(await webhookResults(test)).toMatchObject(
      corpusCase.sameTransition === true ? { [result]: 1, duplicate: 1 } : { [result]: 2 },
    );
    counts(await test.samples());
  });

  it('keeps at most 50 unrecognized types as labels, the rest as other, all counted from 0', async () => {
    const { test, post } = await startWebhookExporter();
    const before = await test.samples();
    expect(
      series(before, 'trunk_exporter_api_anomalies_total').filter(
        ([labels]) => (labels as Record<string, string>).endpoint === 'webhook',
      ),
    ).toEqual([
      [{ endpoint: 'webhook', kind: 'missing_field' }, 0],
      [{ endpoint: 'webhook', kind: 'invalid_field' }, 0],
      [{ endpoint: 'webhook', kind: 'timestamp_out_of_range' }, 0],
    ]);
    for (let index = 0; index < 52; index++) {
      const body = JSON.stringify({ type: `invented.type_${index}` });
      expect((await post(body)).status).toBe(204);
    }
    const samples = await test.samples();
    const types = select(samples, 'trunk_exporter_webhook_unrecognized_events_total');
    expect(types).toHaveLength(51);
    expect(
      sum(samples, 'trunk_exporter_webhook_unrecognized_events_total', { type: 'other' }),
    ).toBe(2);
    expect(
      sum(samples, 'trunk_exporter_webhook_unrecognized_events_total', {
        type: 'invented.type_49',
      }),
    ).toBe(1);
    expect((await webhookResults(test)).unrecognized).toBe(52);
  });

  it.each(SIGNERS)(
    'webhook-standard-headers: accepts webhook-id/-timestamp/-signature signed by %s',
    async (_signer, sign) => {
      const { test, post } = await startWebhookExporter();
      const body = fixtureText('webhook-standard-headers');
      const svix = signedHeaders(body, { sign });
      const standard = {
        'content-type': 'application/json',
        'webhook-id': svix['svix-id'] ?? '',
        'webhook-timestamp': svix['svix-timestamp'] ?? '',
        'webhook-signature': svix['svix-signature'] ?? '',
      };
      expect((await post(body, standard)).status).toBe(204);
      // The same message under the other names is the same id: a duplicate.
      expect((await post(body, svix)).status).toBe(204);
      const stale = {
        ...standard,
        'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 120),
      };
      expect((await post(body, stale)).status).toBe(401);
      const wrong = { ...standard, 'webhook-id': 'msg_other' };
      expect((await post(body, wrong)).status).toBe(401);
      expect(await webhookResults(test)).toMatchObject({
        accepted: 1,
        duplicate: 1,
        unsigned: 1,
        invalid_signature: 1,
      });
      expect(series(await test.samples(), 'trunk_merge_queue_webhook_events_total')).toEqual([
        [{ repo: WEB, branch: 'main', event: 'pull_request.queued' }, 1],
      ]);
    },
  );
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  mergeQueueEventLabel,
  parseWebhookEvent,
  repoNameFromHtmlUrl,
} from '../../src/trunk/webhookEvents.js';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'webhooks');

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8'));
}

describe('parseWebhookEvent', () => {
  it('reads a failed PR: target, number, failure reason and transition time', () => {
    expect(parseWebhookEvent(fixture('pull-request-failed'))).toEqual({
      ok: true,
      event: {
        kind: 'pull_request',
        type: 'pull_request.failed',
        repo: { host: 'github.com', owner: 'acme', name: 'web' },
        repoName: 'github.com/acme/web',
        branch: 'main',
        prNumber: 1234,
        failureReason: 'TEST_RUN_REQUIRED_STATUS_FAILED',
        batched: true,
        transitionSeconds: Date.parse('2026-03-02T10:15:30.250Z') / 1000,
      },
      anomalies: [],
    });
  });

  it('takes the type from action in the catalog example that has no type and no timestamp', () => {
    const parsed = parseWebhookEvent(fixture('pull-request-merged-catalog-example-without-type'));
    expect(parsed).toMatchObject({
      ok: true,
      event: { kind: 'pull_request', type: 'pull_request.merged', transitionSeconds: undefined },
    });
  });

  it('reads a batch event with its pull requests', () => {
    expect(parseWebhookEvent(fixture('pull-request-batch-pending-failure'))).toMatchObject({
      ok: true,
      event: {
        kind: 'pull_request_batch',
        type: 'pull_request_batch.pending_failure',
        repoName: 'github.com/acme/web',
        branch: 'main',
        prNumbers: [1, 2],
      },
    });
  });

  it('reads the three flaky-test events, their repository from repository.html_url', () => {
    expect(parseWebhookEvent(fixture('test-case-status-changed-v2'))).toEqual({
      ok: true,
      event: {
        kind: 'flaky_tests',
        type: 'v2.test_case.status_changed',
        repoName: 'github.com/acme/web',
        previousStatus: 'healthy',
        newStatus: 'flaky',
        transitionSeconds: Date.parse('2026-03-02T10:15:30Z') / 1000,
      },
      anomalies: [],
    });
    expect(parseWebhookEvent(fixture('test-case-monitor-status-changed'))).toMatchObject({
      ok: true,
      event: {
        repoName: 'github.com/acme/web',
        monitorType: 'pass_on_retry',
        monitorStatus: 'active',
      },
    });
    // The changelog's example has the repository inside test_case, and its time in the change.
    expect(
      parseWebhookEvent(fixture('test-case-quarantining-setting-changed-changelog-example')),
    ).toEqual({
      ok: true,
      event: {
        kind: 'flaky_tests',
        type: 'test_case.quarantining_setting_changed',
        repoName: 'github.com/acme/web',
        previousSetting: 'UNSPECIFIED',
        newSetting: 'NEVER_QUARANTINE',
        transitionSeconds: Date.parse('2025-06-11T14:17:06.251Z') / 1000,
      },
      anomalies: [],
    });
  });

  it('reads v1 test_case.status_changed as a status change, from its status_change', () => {
    expect(parseWebhookEvent(fixture('webhook-v1-status-changed'))).toEqual({
      ok: true,
      event: {
        kind: 'flaky_tests',
        type: 'test_case.status_changed',
        repoName: 'github.com/acme/web',
        previousStatus: 'healthy',
        newStatus: 'flaky',
        transitionSeconds: Date.parse('2024-12-16T18:02:11.120Z') / 1000,
      },
      anomalies: [],
    });
  });

  it('reads test_case.investigation_completed, its time from created_at', () => {
    expect(parseWebhookEvent(fixture('webhook-investigation-completed'))).toEqual({
      ok: true,
      event: {
        kind: 'flaky_tests',
        type: 'test_case.investigation_completed',
        repoName: 'github.com/acme/web',
        transitionSeconds: Date.parse('2026-04-17T23:26:45.000Z') / 1000,
      },
      anomalies: [],
    });
  });

  it.each([
    ['webhook-null-batched', { batched: undefined }],
    ['webhook-null-timestamp', { transitionSeconds: undefined }],
    ['webhook-empty-failure-reason', { failureReason: undefined }],
    ['webhook-empty-previous-status', { previousStatus: undefined, newStatus: 'broken' }],
  ])('takes null or "" in %s for an absent field, without an anomaly', (name, fields) => {
    const parsed = parseWebhookEvent(fixture(name));
    expect(parsed).toMatchObject({ ok: true, event: fields, anomalies: [] });
  });

  it.each([
    [
      'webhook-timestamp-without-zone',
      { type: 'pull_request.queued', prNumber: 7, transitionSeconds: undefined },
      { kind: 'invalid_field', field: 'timestamp' },
    ],
    [
      'webhook-without-pr-number',
      { type: 'pull_request.merged', prNumber: undefined, branch: 'main' },
      { kind: 'missing_field', field: 'pr_number' },
    ],
  ])('keeps %s, its unfit field absent and counted', (name, fields, anomaly) => {
    expect(parseWebhookEvent(fixture(name))).toMatchObject({
      ok: true,
      event: fields,
      anomalies: [anomaly],
    });
  });

  it('treats an unfit value as absent whatever its type, and a time outside 2000-2100 too', () => {
    const parsed = parseWebhookEvent({
      type: 'pull_request.failed',
      pr_number: 'forty-two',
      repository: { host: 'github.com', owner: 'acme', name: 'web' },
      target_branch: 'main',
      failure_reason: { nested: true },
      batched: 'yes',
      timestamp: '1970-01-01T00:00:00Z',
    });
    expect(parsed).toMatchObject({
      ok: true,
      event: { prNumber: undefined, failureReason: undefined, batched: undefined },
      anomalies: [
        { kind: 'timestamp_out_of_range', field: 'timestamp' },
        { kind: 'invalid_field', field: 'pr_number' },
        { kind: 'invalid_field', field: 'failure_reason' },
        { kind: 'invalid_field', field: 'batched' },
      ],
    });
  });

  it('has nothing to count for a known type naming no usable target', () => {
    expect(
      parseWebhookEvent(fixture('webhook-status-changed-repository-not-a-repository-url')),
    ).toEqual({
      ok: false,
      recognized: true,
      type: 'v2.test_case.status_changed',
      problem: 'no usable repository.html_url',
      anomalies: [{ kind: 'invalid_field', field: 'repository.html_url' }],
    });
  });

  it('does not recognize an unknown type, a body without a type, or one that is not an object', () => {
    expect(parseWebhookEvent(fixture('webhook-unknown-type'))).toMatchObject({
      ok: false,
      recognized: false,
      type: 'pull_request_test_summary.completed',
    });
    for (const body of [[], null, 7, { pr_number: 1 }, { type: 'pull request.merged' }]) {
      expect(parseWebhookEvent(body)).toMatchObject({
        ok: false,
        recognized: false,
        type: undefined,
      });
    }
  });
});

describe('repoNameFromHtmlUrl', () => {
  it.each([
    ['https://github.com/o/n', 'github.com/o/n'],
    ['https://GitHub.com/o/n/', 'github.com/o/n'],
    ['https://github.com/o/n.git', 'github.com/o/n'],
    ['https://git.example.com:8443/o/n', 'git.example.com:8443/o/n'],
  ])('%s is %s', (url, name) => {
    expect(repoNameFromHtmlUrl(url)).toBe(name);
  });

  it.each([
    'github.com/o/n',
    'ftp://github.com/o/n',
    'https://github.com/o',
    'https://github.com/o/n/tree/main',
    'https://user:pass@github.com/o/n',
    'https://github.com/o/%E0%A4%A',
  ])('refuses %s', (url) => {
    expect(repoNameFromHtmlUrl(url)).toBeUndefined();
  });
});

describe('mergeQueueEventLabel', () => {
  it('keeps known types and bounds the rest to other', () => {
    expect(mergeQueueEventLabel('pull_request.merged')).toBe('pull_request.merged');
    expect(mergeQueueEventLabel('pull_request_batch.pending_failure')).toBe(
      'pull_request_batch.pending_failure',
    );
    expect(mergeQueueEventLabel('pull_request.invented_yesterday')).toBe('other');
  });
});

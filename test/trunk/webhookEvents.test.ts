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
    });
  });

  it.each([
    ['invalid-pull-request-without-pr-number', /^pr_number: /],
    [
      'invalid-unknown-event-type',
      /^type: unknown event type "test_case.investigation_completed"$/,
    ],
    [
      'invalid-status-changed-repository-not-a-repository-url',
      /^repository\.html_url: expected https:\/\/host\/owner\/name$/,
    ],
    ['invalid-pull-request-timestamp-without-zone', /^timestamp: expected an RFC 3339 date-time/],
  ])('refuses %s with a problem naming the field', (name, problem) => {
    const parsed = parseWebhookEvent(fixture(name));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problem).toMatch(problem);
  });

  it('refuses what is not an object, or has no type', () => {
    expect(parseWebhookEvent([])).toEqual({ ok: false, problem: 'body: expected a JSON object' });
    expect(parseWebhookEvent(null)).toEqual({ ok: false, problem: 'body: expected a JSON object' });
    expect(parseWebhookEvent({ pr_number: 1 })).toEqual({ ok: false, problem: 'type: required' });
    expect(parseWebhookEvent({ type: 'pull request.merged' })).toEqual({
      ok: false,
      problem: 'type: not an event type',
    });
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

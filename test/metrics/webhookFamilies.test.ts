// The webhook families through the production page: a store with two targets whose webhook counts were
// fed signed-event shapes, the page compared whole with its golden.
import { describe, expect, it } from 'vitest';
import { MetricsPage } from '../../src/metrics/metricsPage.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { SnapshotFamilies } from '../../src/metrics/snapshotFamilies.js';
import { WEBHOOK_FAMILIES } from '../../src/metrics/webhookFamilies.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import type { Target } from '../../src/snapshot/types.js';
import type { WebhookEvent } from '../../src/trunk/webhookEvents.js';
import { foldWebhookEvent } from '../../src/webhooks/webhookCounting.js';
import { expectGolden } from './golden.js';
import { renderPage } from './page.js';

const QUEUE: Target = { kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' };
const FLAKY: Target = { kind: 'flaky_tests', repo: 'github.com/acme/web', branch: '' };
const UNTOUCHED: Target = { kind: 'merge_queue', repo: 'github.com/acme/api', branch: 'main' };
const REPO = { host: 'github.com', owner: 'acme', name: 'web' };

function pullRequest(type: string, failureReason?: string): WebhookEvent {
  return {
    kind: 'pull_request',
    type,
    repo: REPO,
    repoName: 'github.com/acme/web',
    branch: 'main',
    prNumber: 7,
    failureReason,
    batched: false,
    transitionSeconds: undefined,
  };
}

const FLAKY_EVENTS: readonly WebhookEvent[] = [
  {
    kind: 'flaky_tests',
    type: 'v2.test_case.status_changed',
    repoName: 'github.com/acme/web',
    previousStatus: 'healthy',
    newStatus: 'flaky',
    transitionSeconds: undefined,
  },
  {
    kind: 'flaky_tests',
    type: 'test_case.monitor_status_changed',
    repoName: 'github.com/acme/web',
    monitorType: 'pass_on_retry',
    monitorStatus: 'active',
    transitionSeconds: undefined,
  },
  {
    kind: 'flaky_tests',
    type: 'test_case.quarantining_setting_changed',
    repoName: 'github.com/acme/web',
    previousSetting: 'UNSPECIFIED',
    newSetting: 'ALWAYS_QUARANTINE',
    transitionSeconds: undefined,
  },
  {
    kind: 'flaky_tests',
    type: 'test_case.investigation_completed',
    repoName: 'github.com/acme/web',
    transitionSeconds: undefined,
  },
];

describe('webhook families', () => {
  it("renders each target's webhook counts as counters, and nothing for a target without events", async () => {
    const store = new SnapshotStore(600, () => 1_772_000_000);
    store.setTargets([QUEUE, UNTOUCHED, FLAKY]);
    const events: [Target, WebhookEvent][] = [
      [QUEUE, pullRequest('pull_request.queued')],
      [QUEUE, pullRequest('pull_request.failed', 'TEST_RUN_REQUIRED_STATUS_FAILED')],
      [QUEUE, pullRequest('pull_request.failed', 'MERGE_CONFLICT')],
      [QUEUE, pullRequest('pull_request.failed', 'TEST_RUN_REQUIRED_STATUS_FAILED')],
      [QUEUE, pullRequest('pull_request.bisection_started')],
      ...FLAKY_EVENTS.map((event): [Target, WebhookEvent] => [FLAKY, event]),
    ];
    for (const [target, event] of events) {
      store.updateWebhookCounts(target, (counts) => foldWebhookEvent(counts, event, 1_772_000_000));
    }
    const page = new MetricsPage({
      registry: createRegistry({ defaultMetrics: false }),
      store,
      snapshotMetrics: new SnapshotFamilies({
        settings: {
          mergeQueueIntervalSeconds: 30,
          flakyTestsIntervalSeconds: 300,
          topCodeowners: 5,
          version: 'test',
        },
        selection: {},
        definitions: WEBHOOK_FAMILIES,
      }),
    });
    const text = await renderPage(page);
    expectGolden('webhook-counters.prom', text);
    expect(text).toContain(
      'trunk_merge_queue_pull_requests_failed_total{repo="github.com/acme/web",branch="main",reason="TEST_RUN_REQUIRED_STATUS_FAILED"} 2',
    );
    expect(text).toContain(
      'trunk_merge_queue_webhook_events_total{repo="github.com/acme/web",branch="main",event="other"} 1',
    );
    expect(text).not.toContain('github.com/acme/api');
  });
});

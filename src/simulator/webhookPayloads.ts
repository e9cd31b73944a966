// World events as the webhook bodies Trunk sends through Svix, shaped after the examples of Svix's
// event catalog for trunk.io and Trunk's Merge Queue and Flaky Tests webhook pages: the fields the
// exporter reads plus the usual company, so a receiver sees what a real one would.
import type { PullRequestState } from './pullRequest.js';
import type { QuarantineChange, QuarantineStatus } from './quarantineModel.js';
import { stableUuid, unitHash } from './random.js';
import { repositoryKey, SIMULATOR_ORG_SLUG, type SimulatedRepository } from './repositories.js';
import { isoTimestamp } from './responses.js';
import type { SimulatedTest } from './testCollectionModel.js';
import type { WorldEvent } from './worldEvents.js';

type PullRequestEvent = Extract<WorldEvent, { kind: 'pull_request' }>;

/** What a webhook says of a test, quarantined or not. */
type WebhookTest = Pick<
  SimulatedTest,
  'testCaseId' | 'name' | 'classname' | 'file' | 'codeowners' | 'variant' | 'status'
>;

/** Share of tests turning flaky or broken whose AI investigation completes at once. */
const INVESTIGATED_SHARE = 0.3;

/** One webhook: its Svix event type and its JSON body. */
export interface WebhookPayload {
  readonly type: string;
  readonly body: Readonly<Record<string, unknown>>;
}

/** The `action` of the pull_request.* event a state change makes, if any. */
function pullRequestAction(
  from: PullRequestState | undefined,
  to: PullRequestState,
): string | undefined {
  if (from === undefined) return 'submitted';
  switch (to) {
    // Ready to test, first or again after a restart.
    case 'pending':
      return 'queued';
    case 'testing':
      return 'testing';
    case 'merged':
      return 'merged';
    case 'failed':
      return 'failed';
    case 'cancelled':
      return 'canceled';
    // Trunk sends no pull_request event for these.
    case 'not_ready':
    case 'tests_passed':
    case 'pending_failure':
      return undefined;
  }
}

/**
 * The webhooks a world event makes: none, one, or (a test's status) two, and a third when an
 * investigation of a test turning unhealthy completes.
 */
export function webhookPayloads(event: WorldEvent): WebhookPayload[] {
  switch (event.kind) {
    case 'pull_request': {
      const action = pullRequestAction(event.from, event.pr.state);
      if (action === undefined) return [];
      return [pullRequestPayload(event, action)];
    }
    case 'quarantine':
      return quarantinePayloads(event.repository, event.change);
    case 'test': {
      const { test, previous, at } = event.change;
      const payloads = statusPayloads(event.repository, test, false, previous, at);
      const unhealthy = test.status !== 'HEALTHY';
      if (unhealthy && unitHash(`investigation:${test.testCaseId}:${at}`) < INVESTIGATED_SHARE) {
        payloads.push(investigationPayload(event.repository, test, at));
      }
      return payloads;
    }
  }
}

/**
 * A pull_request.* event. A failure or cancellation gives the reason the queue-entry history
 * records for it (none when the history has none), so the two witnesses of one change agree.
 */
function pullRequestPayload(
  { repository, branch, batched, pr, reason, at }: PullRequestEvent,
  action: string,
): WebhookPayload {
  const type = `pull_request.${action}`;
  return {
    type,
    body: {
      action,
      author: pr.author,
      batched,
      http_details_url: `https://app.trunk.io/gh/${repository.owner}/${repository.name}/merge/${branch}/${pr.number}`,
      pr_number: pr.number,
      repository: { host: repository.host, owner: repository.owner, name: repository.name },
      status: action,
      target_branch: branch,
      timestamp: isoTimestamp(at),
      type,
      ...(action === 'failed' && reason !== null ? { failure_reason: reason } : {}),
      ...(action === 'canceled' && reason !== null ? { cancellation_reason: reason } : {}),
    },
  };
}

function repositoryUrl(repository: SimulatedRepository): string {
  return `https://${repositoryKey(repository)}`;
}

function testCase(repository: SimulatedRepository, test: WebhookTest, quarantined: boolean) {
  return {
    id: test.testCaseId,
    name: test.name,
    classname: test.classname ?? '',
    file_path: test.file ?? '',
    html_url: `https://app.trunk.io/${SIMULATOR_ORG_SLUG}/flaky-tests/test/${test.testCaseId}?repo=${repository.owner}%2F${repository.name}`,
    codeowners: [...test.codeowners],
    quarantined,
    variant: test.variant,
  };
}

/** The monitor that flags a status, as test_case.monitor_status_changed names it. */
function monitorType(status: QuarantineStatus): string {
  return status === 'BROKEN' ? 'failure_rate' : 'pass_on_retry';
}

function repositoryField(repository: SimulatedRepository) {
  return { id: `repo-${repositoryKey(repository)}`, html_url: repositoryUrl(repository) };
}

function quarantinePayloads(
  repository: SimulatedRepository,
  change: QuarantineChange,
): WebhookPayload[] {
  const { test } = change;
  if (change.kind === 'setting') {
    const timestamp = isoTimestamp(change.at);
    const type = 'test_case.quarantining_setting_changed';
    return [
      {
        type,
        body: {
          quarantine_setting_changed: {
            actor: { email: 'oncall@example.com', full_name: 'On-call engineer' },
            previous_quarantining_setting: change.previous,
            reason: 'set in the simulator',
            timestamp,
            updated_quarantining_setting: change.updated,
          },
          test_case: {
            ...testCase(repository, test, true),
            repository: { html_url: repositoryUrl(repository) },
          },
          type,
        },
      },
    ];
  }
  return statusPayloads(repository, test, true, change.previous, change.at);
}

/** A status change: v2.test_case.status_changed and the monitor's test_case.monitor_status_changed. */
function statusPayloads(
  repository: SimulatedRepository,
  test: WebhookTest,
  quarantined: boolean,
  previous: QuarantineStatus,
  at: number,
): WebhookPayload[] {
  const timestamp = isoTimestamp(at);
  // Healthy again: the monitor that flagged the old status resolves; otherwise one activates.
  const healthy = test.status === 'HEALTHY';
  const monitor = {
    id: `monitor-${monitorType(healthy ? previous : test.status)}`,
    type: monitorType(healthy ? previous : test.status),
    status: healthy ? 'resolved' : 'active',
  };
  return [
    {
      type: 'v2.test_case.status_changed',
      body: {
        type: 'v2.test_case.status_changed',
        timestamp,
        previous_status: previous,
        new_status: test.status,
        triggered_by: { monitor_id: monitor.id },
        repository: repositoryField(repository),
        test_case: testCase(repository, test, quarantined),
      },
    },
    {
      type: 'test_case.monitor_status_changed',
      body: {
        type: 'test_case.monitor_status_changed',
        timestamp,
        monitor,
        evidence: {},
        repository: repositoryField(repository),
        test_case: testCase(repository, test, quarantined),
      },
    },
  ];
}

/** Trunk's AI finished investigating a test that turned unhealthy (shaped as Trunk's example). */
function investigationPayload(
  repository: SimulatedRepository,
  test: WebhookTest,
  at: number,
): WebhookPayload {
  const type = 'test_case.investigation_completed';
  const confidence = Math.round(
    (0.55 + unitHash(`confidence:${test.testCaseId}:${at}`) * 0.4) * 100,
  );
  return {
    type,
    body: {
      type,
      investigation_id: stableUuid(`investigation:${test.testCaseId}:${at}`),
      confidence: confidence / 100,
      created_at: isoTimestamp(at),
      failure_message:
        test.status === 'BROKEN'
          ? 'AssertionError: expected the request to succeed, it failed every run'
          : 'Timeout: the test passed on retry after waiting for a slow dependency',
      markdown_summary:
        test.status === 'BROKEN'
          ? 'The test fails on every run since a recent change to the code it covers.'
          : 'The test depends on timing: it fails when a dependency answers slowly.',
      repository: repositoryField(repository),
      test_case: testCase(repository, test, false),
      facts: [{ fact_type: 'CI_LOGS', content: 'Failure seen in the last runs.', confidence: 0.8 }],
    },
  };
}

// World events as the webhook bodies Trunk sends through Svix, shaped after the examples of Svix's
// event catalog for trunk.io and Trunk's Merge Queue and Flaky Tests webhook pages: the fields the
// exporter reads plus the usual company, so a receiver sees what a real one would.
import type { PullRequestState, SimulatedPullRequest } from './pullRequest.js';
import type { QuarantineChange, SimulatedQuarantinedTest } from './quarantineModel.js';
import { repositoryKey, SIMULATOR_ORG_SLUG, type SimulatedRepository } from './repositories.js';
import { isoTimestamp } from './responses.js';
import type { WorldEvent } from './worldEvents.js';

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

/** The webhooks a world event makes: none, one, or (a test's status) two. */
export function webhookPayloads(event: WorldEvent): WebhookPayload[] {
  if (event.kind === 'pull_request') {
    const action = pullRequestAction(event.from, event.pr.state);
    if (action === undefined) return [];
    return [
      pullRequestPayload(event.repository, event.branch, event.batched, event.pr, action, event.at),
    ];
  }
  return quarantinePayloads(event.repository, event.change);
}

function pullRequestPayload(
  repository: SimulatedRepository,
  branch: string,
  batched: boolean,
  pr: SimulatedPullRequest,
  action: string,
  at: number,
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
      ...(action === 'failed' ? { failure_reason: pr.failureReason } : {}),
      ...(action === 'canceled' ? { cancellation_reason: 'USER_REQUESTED' } : {}),
    },
  };
}

function repositoryUrl(repository: SimulatedRepository): string {
  return `https://${repositoryKey(repository)}`;
}

function testCase(repository: SimulatedRepository, test: SimulatedQuarantinedTest) {
  return {
    id: test.testCaseId,
    name: test.name,
    classname: test.classname ?? '',
    file_path: test.file ?? '',
    html_url: `https://app.trunk.io/${SIMULATOR_ORG_SLUG}/flaky-tests/test/${test.testCaseId}?repo=${repository.owner}%2F${repository.name}`,
    codeowners: [...test.codeowners],
    quarantined: true,
    variant: test.variant,
  };
}

/** The monitor that flags a status, as test_case.monitor_status_changed names it. */
function monitorType(status: SimulatedQuarantinedTest['status']): string {
  return status === 'BROKEN' ? 'failure_rate' : 'pass_on_retry';
}

function quarantinePayloads(
  repository: SimulatedRepository,
  change: QuarantineChange,
): WebhookPayload[] {
  const { test } = change;
  const timestamp = isoTimestamp(change.at);
  if (change.kind === 'setting') {
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
            ...testCase(repository, test),
            repository: { html_url: repositoryUrl(repository) },
          },
          type,
        },
      },
    ];
  }
  const repositoryField = {
    id: `repo-${repositoryKey(repository)}`,
    html_url: repositoryUrl(repository),
  };
  // Healthy again: the monitor that flagged the old status resolves; otherwise one activates.
  const healthy = test.status === 'HEALTHY';
  const monitor = {
    id: `monitor-${monitorType(healthy ? change.previous : test.status)}`,
    type: monitorType(healthy ? change.previous : test.status),
    status: healthy ? 'resolved' : 'active',
  };
  return [
    {
      type: 'v2.test_case.status_changed',
      body: {
        type: 'v2.test_case.status_changed',
        timestamp,
        previous_status: change.previous,
        new_status: test.status,
        triggered_by: { monitor_id: monitor.id },
        repository: repositoryField,
        test_case: testCase(repository, test),
      },
    },
    {
      type: 'test_case.monitor_status_changed',
      body: {
        type: 'test_case.monitor_status_changed',
        timestamp,
        monitor,
        evidence: {},
        repository: repositoryField,
        test_case: testCase(repository, test),
      },
    },
  ];
}

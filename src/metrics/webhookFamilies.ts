// Counts from Trunk's webhooks, rendered from each target's webhook counts in the snapshot store
// (src/webhooks/ folds every accepted event into it). Every configured target with webhook counts counts,
// stale or not: counters only count what was received.
import { MAX_REASONS_PER_FAMILY, OTHER_REASON } from '../snapshot/entryHistoryTypes.js';
import type { TargetStatus } from '../snapshot/types.js';
import {
  MAX_WEBHOOK_LABEL_VALUES,
  OTHER_WEBHOOK_VALUE,
  type PairCount,
  type WebhookCounts,
} from '../snapshot/webhookCounts.js';
import { fromEntryHistory } from './entryHistoryMetrics.js';
import { samplesByKey, type PerTargetFamily, type Sample } from './family.js';
import { NAMESPACE, fqName } from './naming.js';

const SINCE_START = 'Counted from signed webhooks Trunk sent; starts at 0 when the exporter starts';

function capped(what: string): string {
  return (
    `At most ${MAX_WEBHOOK_LABEL_VALUES} distinct ${what} per target are kept as labels; ` +
    `later ones count as ${OTHER_WEBHOOK_VALUE}`
  );
}

/** The samples of a target's webhook counts, given its repo and branch; none without any. */
function ofWebhookCounts(
  samples: (counts: WebhookCounts, repo: string, branch: string) => Iterable<Sample>,
): (status: TargetStatus) => Iterable<Sample> {
  return ({ target, webhookCounts }) =>
    webhookCounts === undefined ? [] : samples(webhookCounts, target.repo, target.branch);
}

/** A sample per counted pair, labelled repo, the pair's first value and its second. */
function pairSamples(repo: string, pairs: ReadonlyMap<string, PairCount>): Sample[] {
  return Array.from(pairs.values(), ({ first, second, count }) => ({
    labels: [repo, first, second],
    value: count,
  }));
}

/** Failed pull requests by reason: webhook events, and without them the queue-entry histories. */
export const FAILED_BY_REASON = fqName(NAMESPACE, 'merge_queue', 'pull_requests_failed', 'total');

/** The webhook families, in page order: one per target with webhook counts. */
export const WEBHOOK_FAMILIES: readonly PerTargetFamily[] = [
  {
    name: fqName(NAMESPACE, 'merge_queue', 'webhook_events', 'total'),
    help: () =>
      'Merge-queue webhook events accepted, by event type (pull_request.* and pull_request_batch.*; ' +
      `types the exporter does not know count as ${OTHER_WEBHOOK_VALUE}). ${SINCE_START}.`,
    type: 'counter',
    labelNames: ['repo', 'branch', 'event'],
    scope: 'target',
    samples: ofWebhookCounts((counts, repo, branch) => samplesByKey([repo, branch], counts.events)),
  },
  {
    name: FAILED_BY_REASON,
    help: (settings) =>
      'Pull requests that failed in the merge queue, by reason, each failure once whichever ' +
      'witness saw it first: the failure_reason of its pull_request.failed webhook event (unknown ' +
      'when it has none; from signed webhooks Trunk sent, since the exporter started), or the reason ' +
      'of its transition to failed in its queue-entry history. At most ' +
      `${MAX_REASONS_PER_FAMILY} reasons per queue, both witnesses together, are kept as labels; ` +
      `later new ones count as ${OTHER_REASON}. ` +
      `The history's share is ${fromEntryHistory(settings)}; while its reads fail, or once a ` +
      'reload turns them off, it stays at what it counted, so that no series goes down.',
    type: 'counter',
    labelNames: ['repo', 'branch', 'reason'],
    scope: 'target',
    samples: (status) => {
      const byReason = new Map(status.webhookCounts?.failureReasons);
      // Hidden or not, the history's share stays at what it counted: the sum must not go down.
      for (const [reason, count] of status.queueFlow?.entryHistory?.failed ?? []) {
        byReason.set(reason, (byReason.get(reason) ?? 0) + count);
      }
      const { repo, branch } = status.target;
      return samplesByKey([repo, branch], byReason);
    },
  },
  {
    name: fqName(NAMESPACE, 'flaky_tests', 'status_changes', 'total'),
    help: () =>
      'Test status changes (v2.test_case.status_changed and v1 test_case.status_changed), from the ' +
      `previous to the new status (unknown when the event lacks one). ${SINCE_START}. ` +
      `${capped('statuses')}.`,
    type: 'counter',
    labelNames: ['repo', 'from', 'to'],
    scope: 'target',
    samples: ofWebhookCounts((counts, repo) => pairSamples(repo, counts.statusChanges)),
  },
  {
    name: fqName(NAMESPACE, 'flaky_tests', 'quarantine_setting_changes', 'total'),
    help: () =>
      "Manual changes of a test's quarantine setting (test_case.quarantining_setting_changed), " +
      `by the new setting. ${SINCE_START}. ${capped('settings')}.`,
    type: 'counter',
    labelNames: ['repo', 'setting'],
    scope: 'target',
    samples: ofWebhookCounts((counts, repo) => samplesByKey([repo], counts.settingChanges)),
  },
  {
    name: fqName(NAMESPACE, 'flaky_tests', 'monitor_events', 'total'),
    help: () =>
      'Flaky-test monitor activations and resolutions (test_case.monitor_status_changed), by monitor ' +
      `type and status. ${SINCE_START}. ${capped('monitor types and statuses')}.`,
    type: 'counter',
    labelNames: ['repo', 'monitor_type', 'status'],
    scope: 'target',
    samples: ofWebhookCounts((counts, repo) => pairSamples(repo, counts.monitorEvents)),
  },
  {
    name: fqName(NAMESPACE, 'flaky_tests', 'investigations_completed', 'total'),
    help: () =>
      `AI investigations of flaky tests that Trunk completed (test_case.investigation_completed). ${SINCE_START}.`,
    type: 'counter',
    labelNames: ['repo'],
    scope: 'target',
    samples: ofWebhookCounts((counts, repo) =>
      counts.investigations === 0 ? [] : [{ labels: [repo], value: counts.investigations }],
    ),
  },
];

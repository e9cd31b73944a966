import type { PollKind, TargetStatus } from '../snapshot/types.js';
import type { AcrossTargetsFamily, FamilySettings, PerTargetFamily, Sample } from './family.js';
import { formatInterval } from './help.js';
import { NAMESPACE, fqName } from './naming.js';

const SUBSYSTEM = 'exporter';

const TARGET_LABELS = ['repo', 'branch', 'kind'] as const;

function scheduleOf(settings: FamilySettings): string {
  return (
    `Targets are polled every ${formatInterval(settings.mergeQueueIntervalSeconds)} (merge_queue) ` +
    `and every ${formatInterval(settings.flakyTestsIntervalSeconds)} (flaky_tests).`
  );
}

/** A `{repo,branch,kind}` gauge of a target's status, when it has a value. */
function ofTarget(
  value: (status: TargetStatus) => number | undefined,
): (status: TargetStatus) => Iterable<Sample> {
  return (status) => {
    const sample = value(status);
    const { repo, branch, kind } = status.target;
    return sample === undefined ? [] : [{ labels: [repo, branch, kind], value: sample }];
  };
}

/** `trunk_exporter_target_up`: never excluded by `metrics.exclude`. */
export const TARGET_UP = fqName(NAMESPACE, SUBSYSTEM, 'target_up');
/** `trunk_exporter_build_info`: never excluded by `metrics.exclude`. */
export const BUILD_INFO = fqName(NAMESPACE, SUBSYSTEM, 'build_info');

/**
 * The exporter's per-target health families. Unlike the data series these come from every
 * configured target, stale or not: they are what tells a dashboard why the data is missing.
 */
export const TARGET_STATUS_FAMILIES: readonly PerTargetFamily[] = [
  {
    name: TARGET_UP,
    help: (settings) =>
      `Whether the target's last poll succeeded (1) or failed (0). ${scheduleOf(settings)}`,
    type: 'gauge',
    labelNames: TARGET_LABELS,
    scope: 'target',
    samples: ofTarget(({ up }) => (up === undefined ? undefined : up ? 1 : 0)),
  },
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'last_success_timestamp', 'seconds'),
    help: (settings) => `Unix time of the target's last successful poll. ${scheduleOf(settings)}`,
    type: 'gauge',
    labelNames: TARGET_LABELS,
    scope: 'target',
    samples: ofTarget(({ lastSuccessAt }) => lastSuccessAt),
  },
];

/** The exporter's families that are not per target: read across every target, or from none. */
export const EXPORTER_SUMMARY_FAMILIES: readonly AcrossTargetsFamily[] = [
  {
    name: fqName(NAMESPACE, SUBSYSTEM, 'poll_duration', 'seconds'),
    help: (settings) =>
      `Duration of the slowest target's latest poll of that kind, in seconds: how long the last polling cycle took. ${scheduleOf(settings)}`,
    type: 'gauge',
    labelNames: ['kind'],
    scope: 'targets',
    samples: (statuses) => {
      const slowest = new Map<PollKind, number>();
      for (const { target, lastDurationSeconds } of statuses) {
        if (lastDurationSeconds === undefined) continue;
        const current = slowest.get(target.kind);
        if (current === undefined || lastDurationSeconds > current) {
          slowest.set(target.kind, lastDurationSeconds);
        }
      }
      return Array.from(slowest, ([kind, seconds]) => ({ labels: [kind], value: seconds }));
    },
  },
  {
    name: BUILD_INFO,
    help: () => 'Version of the exporter; always 1.',
    type: 'info',
    labelNames: ['version'],
    scope: 'targets',
    samples: (_statuses, settings) => [{ labels: [settings.version], value: 1 }],
  },
];

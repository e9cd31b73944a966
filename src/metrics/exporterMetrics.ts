import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { SnapshotStore } from '../snapshot/store.js';
import type { PollKind } from '../snapshot/types.js';
import { formatInterval } from './help.js';
import { NAMESPACE, fqName } from './naming.js';

const SUBSYSTEM = 'exporter';

const TARGET_UP = fqName(NAMESPACE, SUBSYSTEM, 'target_up');
const LAST_SUCCESS = fqName(NAMESPACE, SUBSYSTEM, 'last_success_timestamp', 'seconds');
const POLL_DURATION = fqName(NAMESPACE, SUBSYSTEM, 'poll_duration', 'seconds');
const BUILD_INFO = fqName(NAMESPACE, SUBSYSTEM, 'build_info');

const TARGET_LABELS = ['repo', 'branch', 'kind'] as const;

interface ExporterMetricsOptions {
  readonly registry: Registry;
  readonly store: SnapshotStore;
  readonly version: string;
  readonly mergeQueueIntervalSeconds: number;
  readonly flakyTestsIntervalSeconds: number;
}

/**
 * Registers the exporter's own health gauges. Unlike the data series these come from every
 * configured target, stale or not: they are what tells a dashboard why the data is missing.
 */
export function registerExporterStatusMetrics(options: ExporterMetricsOptions): void {
  const { registry, store } = options;
  const schedule =
    `Targets are polled every ${formatInterval(options.mergeQueueIntervalSeconds)} (merge_queue) ` +
    `and every ${formatInterval(options.flakyTestsIntervalSeconds)} (flaky_tests).`;

  new Gauge({
    name: TARGET_UP,
    help: `Whether the target's last poll succeeded (1) or failed (0). ${schedule}`,
    labelNames: TARGET_LABELS,
    registers: [registry],
    collect() {
      this.reset();
      for (const { target, up } of store.statuses()) {
        if (up === undefined) continue;
        this.set({ repo: target.repo, branch: target.branch, kind: target.kind }, up ? 1 : 0);
      }
    },
  });

  new Gauge({
    name: LAST_SUCCESS,
    help: `Unix time of the target's last successful poll. ${schedule}`,
    labelNames: TARGET_LABELS,
    registers: [registry],
    collect() {
      this.reset();
      for (const { target, lastSuccessAt } of store.statuses()) {
        if (lastSuccessAt === undefined) continue;
        this.set({ repo: target.repo, branch: target.branch, kind: target.kind }, lastSuccessAt);
      }
    },
  });

  new Gauge({
    name: POLL_DURATION,
    help: `Duration of the slowest target's latest poll of that kind, in seconds: how long the last polling cycle took. ${schedule}`,
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const slowest = new Map<PollKind, number>();
      for (const { target, lastDurationSeconds } of store.statuses()) {
        if (lastDurationSeconds === undefined) continue;
        const current = slowest.get(target.kind);
        if (current === undefined || lastDurationSeconds > current) {
          slowest.set(target.kind, lastDurationSeconds);
        }
      }
      for (const [kind, seconds] of slowest) this.set({ kind }, seconds);
    },
  });

  const buildInfo = new Gauge({
    name: BUILD_INFO,
    help: 'Version of the exporter; always 1.',
    labelNames: ['version'] as const,
    registers: [registry],
  });
  buildInfo.set({ version: options.version }, 1);
}

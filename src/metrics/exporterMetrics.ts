import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { PollKind } from '../snapshot/types.js';
import { formatInterval } from './help.js';
import { NAMESPACE, fqName } from './naming.js';
import type { StatusSource } from './snapshotView.js';

const SUBSYSTEM = 'exporter';

const TARGET_UP = fqName(NAMESPACE, SUBSYSTEM, 'target_up');
const LAST_SUCCESS = fqName(NAMESPACE, SUBSYSTEM, 'last_success_timestamp', 'seconds');
const POLL_DURATION = fqName(NAMESPACE, SUBSYSTEM, 'poll_duration', 'seconds');
const BUILD_INFO = fqName(NAMESPACE, SUBSYSTEM, 'build_info');

const TARGET_LABELS = ['repo', 'branch', 'kind'] as const;

interface ExporterMetricsOptions {
  readonly registry: Registry;
  readonly mergeQueueIntervalSeconds: number;
  readonly flakyTestsIntervalSeconds: number;
}

function scheduleOf(options: ExporterMetricsOptions): string {
  return (
    `Targets are polled every ${formatInterval(options.mergeQueueIntervalSeconds)} (merge_queue) ` +
    `and every ${formatInterval(options.flakyTestsIntervalSeconds)} (flaky_tests).`
  );
}

/**
 * Registers the exporter's per-target health gauges. Unlike the data series these come from every
 * configured target, stale or not: they are what tells a dashboard why the data is missing.
 */
export function registerTargetStatusMetrics(
  options: ExporterMetricsOptions & { readonly source: StatusSource },
): void {
  const { registry, source } = options;
  const schedule = scheduleOf(options);

  new Gauge({
    name: TARGET_UP,
    help: `Whether the target's last poll succeeded (1) or failed (0). ${schedule}`,
    labelNames: TARGET_LABELS,
    registers: [registry],
    collect() {
      this.reset();
      for (const { target, up } of source.statuses()) {
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
      for (const { target, lastSuccessAt } of source.statuses()) {
        if (lastSuccessAt === undefined) continue;
        this.set({ repo: target.repo, branch: target.branch, kind: target.kind }, lastSuccessAt);
      }
    },
  });
}

/**
 * Registers the exporter's gauges that are not per target: the slowest poll of each kind, read
 * across every target, and the build.
 */
export function registerExporterSummaryMetrics(
  options: ExporterMetricsOptions & { readonly source: StatusSource; readonly version: string },
): void {
  const { registry, source } = options;
  const schedule = scheduleOf(options);

  new Gauge({
    name: POLL_DURATION,
    help: `Duration of the slowest target's latest poll of that kind, in seconds: how long the last polling cycle took. ${schedule}`,
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const slowest = new Map<PollKind, number>();
      for (const { target, lastDurationSeconds } of source.statuses()) {
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

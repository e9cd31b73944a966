// A metric family as data, in the kube-state-metrics style: what it is called, what it means, how
// it is typed and labelled, and a pure function from snapshots to its samples. The engine
// (metricsPage.ts) renders every definition; nothing else in src/metrics writes exposition text for
// them. To add a gauge whose data is in the snapshot, add one entry to the list of its resource file
// (mergeQueueMetrics.ts, flakyTestsMetrics.ts, queueFlowMetrics.ts, exporterMetrics.ts).
import type { HistogramCounts } from '../snapshot/histogram.js';
import type { TargetStatus } from '../snapshot/types.js';

/**
 * `stateset` and `info` are typed as such in OpenMetrics and as `gauge` in the Prometheus text
 * format, which has neither.
 */
export type FamilyType = 'gauge' | 'counter' | 'histogram' | 'stateset' | 'info';

/** The settings HELP texts (and a few samples) depend on; a reload may change them. */
export interface FamilySettings {
  readonly mergeQueueIntervalSeconds: number;
  readonly flakyTestsIntervalSeconds: number;
  /** How many code owners get their own series; the rest are summed as `other`. */
  readonly topCodeowners: number;
  /** The exporter's version, for build_info. */
  readonly version: string;
}

/** One series: label values in the order of the family's `labelNames`, and its value. */
export interface ValueSample {
  readonly labels: readonly string[];
  readonly value: number;
}

/** One histogram series: label values (without `le`) and its non-cumulative bucket counts. */
export interface HistogramSample {
  readonly labels: readonly string[];
  readonly histogram: HistogramCounts;
  /** Unix seconds: the exemplars of earlier events (or of no known time) are not written. */
  readonly exemplarsSince?: number;
}

export type Sample = ValueSample | HistogramSample;

/** One sample per entry of `entries`: labelled `labels` then the entry's key, valued its value. */
export function samplesByKey(
  labels: readonly string[],
  entries: Iterable<readonly [string, number]>,
): ValueSample[] {
  return Array.from(entries, ([key, value]) => ({ labels: [...labels, key], value }));
}

interface FamilyBase {
  /** The name on the page; a counter's ends in `_total`, an info's in `_info`. */
  readonly name: string;
  readonly help: (settings: FamilySettings) => string;
  readonly type: FamilyType;
  readonly labelNames: readonly string[];
}

/**
 * A family whose series each belong to one target (their labels name it): rendered, and cached,
 * target by target, so a poll of one target renders only that target's series again.
 */
export interface PerTargetFamily extends FamilyBase {
  readonly scope: 'target';
  readonly samples: (status: TargetStatus, settings: FamilySettings) => Iterable<Sample>;
}

/** A family computed across every target (or from none): rendered whole on each store change. */
export interface AcrossTargetsFamily extends FamilyBase {
  readonly scope: 'targets';
  readonly samples: (
    statuses: readonly TargetStatus[],
    settings: FamilySettings,
  ) => Iterable<Sample>;
}

export type FamilyDefinition = PerTargetFamily | AcrossTargetsFamily;

// Counters under a label whose values an upstream names freely (a check's name): the most frequent
// values keep their own series, the rest count under `other`, and no exported series ever goes down.
// Carried on a snapshot from poll to poll; every value is immutable (flow/topLabels.ts counts).
import { NO_ENTRIES } from './noEntries.js';

/** The label value of every count whose own value has no series. */
export const OTHER_LABEL = 'other';

/** How a family's label values are chosen. */
export interface TopLabelLimits {
  /** Values with a series of their own at most (`other` aside). */
  readonly named: number;
  /** Values tallied at most: past it the one that failed least recently is forgotten. */
  readonly tallied: number;
  /** A value with no count for this long (seconds) is forgotten, and its series stops. */
  readonly forgetAfterSeconds: number;
}

/** What the tally remembers of one value. */
export interface LabelTally {
  /** Counts since it was first tallied (or tallied again after being forgotten). */
  readonly count: number;
  /** Unix seconds (the exporter's clock) of its latest count. */
  readonly lastAt: number;
  /** Where its series stopped when it lost its place: it continues from there if named again. */
  readonly stoppedCount?: number;
}

/** Counts by label value: a tally ranks the values, the series are what the page shows. */
export interface TopLabels {
  /** Every value tallied, in the order it was first tallied (which breaks ties). */
  readonly tally: ReadonlyMap<string, LabelTally>;
  /**
   * The exported series: each named value's count since it was named, and OTHER_LABEL once
   * something counted under it. The named values are its keys but OTHER_LABEL.
   */
  readonly series: ReadonlyMap<string, number>;
}

/** Nothing counted yet. */
export const EMPTY_TOP_LABELS: TopLabels = Object.freeze({ tally: NO_ENTRIES, series: NO_ENTRIES });

// Counting under the most frequent label values (snapshot/topLabelTypes.ts). A value is named (has
// a series of its own) while it is among the `named` most counted in the tally; it takes the place
// of the least counted named value only when it is counted strictly more often, so two values
// counted alike do not swap at every count (ties: the one tallied first). A value named late counts
// from then on (what it counted before stays in `other`); one that loses its place stops its series
// and counts in `other` from then on, and continues its series where it stopped if named again.
// So every exported series only grows. Pure; every function returns new values.
import {
  OTHER_LABEL,
  type LabelTally,
  type TopLabelLimits,
  type TopLabels,
} from '../snapshot/topLabelTypes.js';

/** The labels after one count of `value` at `at` (unix seconds). */
export function countTopLabel(
  labels: TopLabels,
  value: string,
  at: number,
  limits: TopLabelLimits,
): TopLabels {
  const tally = new Map(labels.tally);
  const series = new Map(labels.series);
  forgetIdle(tally, series, value, at, limits);
  fillFreePlaces(tally, series, limits);
  // A value spelled like the rest's label is counted with the rest: each label has one meaning.
  if (value === OTHER_LABEL) {
    increment(series, OTHER_LABEL);
    return { tally, series };
  }
  const before = tally.get(value);
  tally.set(value, {
    ...before,
    count: (before?.count ?? 0) + 1,
    lastAt: Math.max(before?.lastAt ?? at, at),
  });
  if (!series.has(value) && namedCount(series) >= limits.named) {
    const least = leastNamed(tally, series);
    if (least !== undefined && countOf(tally, value) > countOf(tally, least)) {
      stop(tally, series, least);
      name(tally, series, value);
    }
  } else if (!series.has(value)) {
    name(tally, series, value);
  }
  increment(series, series.has(value) ? value : OTHER_LABEL);
  forgetPastCap(tally, series, limits);
  return { tally, series };
}

function countOf(tally: ReadonlyMap<string, LabelTally>, value: string): number {
  return tally.get(value)?.count ?? 0;
}

function namedCount(series: ReadonlyMap<string, number>): number {
  return series.size - (series.has(OTHER_LABEL) ? 1 : 0);
}

function increment(series: Map<string, number>, label: string): void {
  series.set(label, (series.get(label) ?? 0) + 1);
}

/** `value` gets a series: from where it stopped, else from 0. */
function name(tally: Map<string, LabelTally>, series: Map<string, number>, value: string): void {
  const { stoppedCount, ...kept } = tally.get(value) ?? { count: 0, lastAt: 0 };
  tally.set(value, kept);
  series.set(value, stoppedCount ?? 0);
}

/** `value` loses its series; the tally remembers where it stopped. */
function stop(tally: Map<string, LabelTally>, series: Map<string, number>, value: string): void {
  const entry = tally.get(value);
  if (entry !== undefined) tally.set(value, { ...entry, stoppedCount: series.get(value) ?? 0 });
  series.delete(value);
}

/** The named value counted least; of equals, the one tallied last. */
function leastNamed(
  tally: ReadonlyMap<string, LabelTally>,
  series: ReadonlyMap<string, number>,
): string | undefined {
  let least: string | undefined;
  for (const [value, { count }] of tally) {
    if (series.has(value) && (least === undefined || count <= countOf(tally, least))) {
      least = value;
    }
  }
  return least;
}

/**
 * Values idle for `forgetAfterSeconds` leave the tally, and their series stop; not `counted`, which
 * is counted now (its series goes on, rather than starting again lower).
 */
function forgetIdle(
  tally: Map<string, LabelTally>,
  series: Map<string, number>,
  counted: string,
  at: number,
  limits: TopLabelLimits,
): void {
  for (const [value, { lastAt }] of tally) {
    if (value === counted || at - lastAt <= limits.forgetAfterSeconds) continue;
    tally.delete(value);
    series.delete(value);
  }
}

/** Places freed by forgotten values go to the most counted unnamed ones (of equals, the first). */
function fillFreePlaces(
  tally: Map<string, LabelTally>,
  series: Map<string, number>,
  limits: TopLabelLimits,
): void {
  while (namedCount(series) < limits.named) {
    let most: string | undefined;
    for (const [value, { count }] of tally) {
      if (!series.has(value) && (most === undefined || count > countOf(tally, most))) most = value;
    }
    if (most === undefined) return;
    name(tally, series, most);
  }
}

/** Past `tallied` values, the unnamed one counted least recently is forgotten. */
function forgetPastCap(
  tally: Map<string, LabelTally>,
  series: ReadonlyMap<string, number>,
  limits: TopLabelLimits,
): void {
  while (tally.size > limits.tallied) {
    let idlest: string | undefined;
    for (const [value, { lastAt }] of tally) {
      const idler = idlest === undefined || lastAt < (tally.get(idlest)?.lastAt ?? 0);
      if (!series.has(value) && idler) idlest = value;
    }
    if (idlest === undefined) return;
    tally.delete(idlest);
  }
}

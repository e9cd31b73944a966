// The most frequent label values, over sequences written by hand from issue 39's rule for check
// failures: "the 20 most frequent per queue by name, the rest `other`", with counters that never go
// down: a value named late counts from then on, one that loses its place stops, and a value takes
// the place of the least frequent named one only when it is strictly more frequent (ties: the one
// seen first).
import { describe, expect, it } from 'vitest';
import { countTopLabel } from '../../src/flow/topLabels.js';
import {
  EMPTY_TOP_LABELS,
  type TopLabelLimits,
  type TopLabels,
} from '../../src/snapshot/topLabelTypes.js';
import { CHECK_LABEL_LIMITS } from '../../src/snapshot/verificationRunTypes.js';

const DAY = 86_400;

/** The labels after counting each of `values` in turn, one second apart from `from`. */
function countAll(
  values: readonly string[],
  limits: TopLabelLimits = CHECK_LABEL_LIMITS,
  labels: TopLabels = EMPTY_TOP_LABELS,
  from = 0,
): TopLabels {
  return values.reduce(
    (counted, value, index) => countTopLabel(counted, value, from + index, limits),
    labels,
  );
}

const checks = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, index) => `check-${String(from + index)}`);

const series = (labels: TopLabels) => Object.fromEntries(labels.series);

const ones = (names: readonly string[]) => Object.fromEntries(names.map((name) => [name, 1]));

describe('the most frequent label values', () => {
  it('names the first 20 values; a 21st failing no more often than they counts as other', () => {
    const labels = countAll([...checks(1, 20), 'late']);
    expect(series(labels)).toEqual({ ...ones(checks(1, 20)), other: 1 });
  });

  it('gives a value failing more often than the least named its place, from then on, and stops the one it takes it from', () => {
    // `late` fails a second time: 2 against 1, it takes the place of the last seen of the 1s
    // (check-20), and counts from this failure on (its first stays in `other`).
    const promoted = countAll(
      ['late', 'late', 'late', 'late'],
      CHECK_LABEL_LIMITS,
      countAll(checks(1, 20)),
      100,
    );
    expect(series(promoted)).toEqual({ ...ones(checks(1, 19)), late: 3, other: 1 });
    // check-20 fails twice more: 3 against 1, it takes check-19's place and goes on from the 1 it
    // stopped at; check-19 stops at its 1.
    const back = countAll(['check-20', 'check-20'], CHECK_LABEL_LIMITS, promoted, 200);
    expect(series(back)).toEqual({ ...ones(checks(1, 18)), 'check-20': 3, late: 3, other: 1 });
  });

  it('keeps the value seen first of two failing as often', () => {
    const limits = { named: 2, tallied: 5, forgetAfterSeconds: DAY };
    // a and b named; c ties with b (1 each): other. a again; c again: 2 against b's 1, c takes
    // b's place. b again: 2 against the least named, c's 2: not more, so other.
    const labels = countAll(['a', 'b', 'c', 'a', 'c', 'b'], limits);
    expect(series(labels)).toEqual({ a: 2, c: 1, other: 2 });
  });

  it('forgets a value idle past its age and one past the cap, the least recently counted first', () => {
    const limits = { named: 2, tallied: 3, forgetAfterSeconds: 100 };
    // a@0 and b@1 named, c@2 other, c@3 takes b's place.
    const before = countAll(['a', 'b', 'c', 'c'], limits);
    expect(series(before)).toEqual({ a: 1, c: 1, other: 1 });
    // At 200 b and c are idle past 100 s and forgotten (c's series stops); a, counted now, goes on.
    const later = countTopLabel(before, 'a', 200, limits);
    expect(series(later)).toEqual({ a: 2, other: 1 });
    expect([...later.tally.keys()]).toEqual(['a']);
    // One named place: x, y, z past the cap of 3 tallied forget the idlest unnamed one (x).
    const capped = countAll(['a', 'x', 'y', 'z'], { ...limits, named: 1 }, EMPTY_TOP_LABELS, 300);
    expect([...capped.tally.keys()]).toEqual(['a', 'y', 'z']);
    expect(series(capped)).toEqual({ a: 1, other: 3 });
  });

  it('counts a value named like the rest as the rest', () => {
    const labels = countAll(['other', 'lint', 'other']);
    expect(series(labels)).toEqual({ lint: 1, other: 2 });
    expect([...labels.tally.keys()]).toEqual(['lint']);
  });

  it('never lowers a series from one count to the next, and names the 20 most frequent, over months of shifting failures', () => {
    // 60 check names; which fail most shifts every 500 failures, with a 9-day pause (past the
    // week a name is remembered) every 2,000.
    let labels = EMPTY_TOP_LABELS;
    let at = 0;
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const wrong: string[] = [];
    let namedLate = 0;
    let scraped: ReadonlyMap<string, number> = new Map();
    for (let index = 0; index < 10_000; index++) {
      at += index % 2000 === 1999 ? 9 * DAY : 60;
      const shift = Math.floor(index / 500) * 7;
      const name = `check-${String((Math.floor(random() ** 3 * 60) + shift) % 60)}`;
      const next = countTopLabel(labels, name, at, CHECK_LABEL_LIMITS);
      for (const [label, value] of next.series) {
        const before = labels.series.get(label);
        if (value < (before ?? 0))
          wrong.push(`${label} down to ${String(value)} at ${String(index)}`);
        if (before === undefined && labels.series.size > 20) namedLate += 1;
      }
      labels = next;
      // A scrape every 25 failures sees each series it saw before at least as high.
      if (index % 25 === 0) {
        for (const [label, value] of labels.series) {
          if (value < (scraped.get(label) ?? 0))
            wrong.push(`${label} scraped lower at ${String(index)}`);
        }
        scraped = labels.series;
      }
      const named = [...labels.series.keys()].filter((label) => label !== 'other');
      if (named.length > 20 || labels.tally.size > 100) wrong.push(`too many at ${String(index)}`);
      // No value left out failed more often than the least named one.
      const least = Math.min(...named.map((label) => labels.tally.get(label)?.count ?? 0));
      for (const [value, { count }] of labels.tally) {
        if (named.length === 20 && !labels.series.has(value) && count > least) {
          wrong.push(`${value} (${String(count)}) left out at ${String(index)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    // The shifts named names late, many times over.
    expect(namedLate).toBeGreaterThan(50);
    expect(labels.series.get('other')).toBeGreaterThan(0);
  });
});

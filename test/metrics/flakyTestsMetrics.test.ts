import { describe, expect, it } from 'vitest';
import { topCodeownerCounts } from '../../src/metrics/flakyTestsMetrics.js';

describe('topCodeownerCounts', () => {
  it('keeps the N largest owners, ties by name, then none, then the rest as other', () => {
    const counts = new Map([
      ['@z', 5],
      ['', 7],
      ['@b', 5],
      ['@big', 9],
      ['@a', 5],
      ['@small', 1],
    ]);
    expect(topCodeownerCounts(counts, 3)).toEqual([
      ['@big', 9],
      ['@a', 5],
      ['@b', 5],
      ['none', 7],
      ['other', 6],
    ]);
  });

  it('adds no other series when nothing is left over', () => {
    expect(topCodeownerCounts(new Map([['@a', 1]]), 3)).toEqual([['@a', 1]]);
    expect(topCodeownerCounts(new Map([['', 2]]), 0)).toEqual([['none', 2]]);
    expect(topCodeownerCounts(new Map(), 5)).toEqual([]);
  });

  it('sums everything as other when N is 0', () => {
    expect(
      topCodeownerCounts(
        new Map([
          ['@a', 1],
          ['@b', 2],
        ]),
        0,
      ),
    ).toEqual([['other', 3]]);
  });

  it('folds an owner literally named other into the rest instead of emitting it twice', () => {
    expect(
      topCodeownerCounts(
        new Map([
          ['other', 4],
          ['@a', 10],
          ['@b', 1],
        ]),
        1,
      ),
    ).toEqual([
      ['@a', 10],
      ['other', 5],
    ]);
  });
});

describe('the no-owner bucket', () => {
  it('keeps tests without owner (key "") apart from an owner literally named none', () => {
    expect(
      topCodeownerCounts(
        new Map([
          ['', 3],
          ['none', 2],
          ['@a', 10],
        ]),
        5,
      ),
    ).toEqual([
      ['@a', 10],
      ['none', 3],
      ['other', 2],
    ]);
  });
});

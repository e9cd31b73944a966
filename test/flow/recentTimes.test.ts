// The bounds of what a ledger remembers per key: rows dated ahead of the exporter's clock stay
// until their date, and no more than MAX_REMEMBERED_AHEAD of them, the nearest, stay at all.
import { describe, expect, it } from 'vitest';
import { MAX_REMEMBERED_AHEAD, forgetFarAhead } from '../../src/flow/recentTimes.js';

describe('forgetFarAhead', () => {
  it('keeps everything up to the latest plausible time, and the 1,000 nearest entries after it', () => {
    const times = new Map<string, number>([
      ['past', 100],
      ['at the slack', 160],
    ]);
    // 1,500 entries dated ahead, the farthest first.
    for (let index = 1500; index >= 1; index -= 1) times.set(`ahead-${String(index)}`, 160 + index);
    forgetFarAhead(times, 160);
    expect(MAX_REMEMBERED_AHEAD).toBe(1000);
    expect(times.size).toBe(1002);
    expect(times.has('past') && times.has('at the slack')).toBe(true);
    expect(times.has('ahead-1000')).toBe(true);
    expect(times.has('ahead-1001')).toBe(false);
  });

  it('leaves a map with no more than the bound ahead as it is', () => {
    const times = new Map(Array.from({ length: 1000 }, (_, index) => [index, 1e9 + index]));
    forgetFarAhead(times, 0);
    expect(times.size).toBe(1000);
  });
});

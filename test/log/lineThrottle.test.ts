// One line per key and interval: the first occurrence is written, those within the interval are
// tallied, and the first after it is written with their tally.
import { describe, expect, it } from 'vitest';
import { LineThrottle } from '../../src/log/lineThrottle.js';

describe('LineThrottle', () => {
  it('admits a key once per interval and hands the next line what it held back', () => {
    let now = 0;
    const lines = new LineThrottle<string, { count: number }>(
      1_000,
      () => ({ count: 0 }),
      () => now,
    );
    const add = (held: { count: number }) => {
      held.count += 1;
    };
    expect(lines.admit('a', add)).toEqual({ held: undefined });
    now = 400;
    expect(lines.admit('a', add)).toBeUndefined();
    expect(lines.admit('a', add)).toBeUndefined();
    // Another key has its own interval.
    expect(lines.admit('b', add)).toEqual({ held: undefined });
    now = 1_000;
    expect(lines.admit('a', add)).toEqual({ held: { count: 2 } });
    now = 1_500;
    expect(lines.admit('a', add)).toBeUndefined();
    now = 2_000;
    expect(lines.admit('a', add)).toEqual({ held: { count: 1 } });
  });
});

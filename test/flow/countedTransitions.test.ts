// What a queue keeps of the transitions its history reads counted for one pull request: one line
// per transition, told apart by when it happened ("changedAt: When the entry entered this state",
// to the millisecond), the state it left and the state it entered, whatever characters the open
// vocabulary of states brings.
import { describe, expect, it } from 'vitest';
import {
  countedLines,
  countedSince,
  joinedLines,
  latestEntered,
  lineCount,
  transitionLine,
} from '../../src/flow/countedTransitions.js';

/** 2026-01-01T10:00:00Z. */
const TEN = 1_767_261_600;
const FINAL: ReadonlySet<string> = new Set(['merged', 'failed', 'cancelled']);

describe('counted transitions', () => {
  it('tells transitions apart by time, by the state left and by the state entered', () => {
    const lines = [
      transitionLine(TEN, 'pending', 'testing'),
      transitionLine(TEN + 0.001, 'pending', 'testing'),
      transitionLine(TEN, 'testsPassed', 'testing'),
      transitionLine(TEN, 'pending', 'cancelled'),
    ];
    expect(new Set(lines).size).toBe(4);
    expect(transitionLine(TEN + 0.0001, 'pending', 'testing')).toBe(lines[0]);
    expect(countedLines(joinedLines(lines))).toEqual(lines);
  });

  it('keeps states with the characters its lines use apart, one line per transition', () => {
    const odd = [
      transitionLine(TEN, 'x', 'a>b'),
      transitionLine(TEN, 'x>a', 'b'),
      transitionLine(TEN, 'x', 'a\nb'),
      transitionLine(TEN, 'x', 'a/b'),
      transitionLine(TEN, 'x', 'a%3eb'),
    ];
    expect(new Set(odd).size).toBe(5);
    expect(countedLines(joinedLines(odd))).toHaveLength(5);
  });

  it('says whether the latest transition ended the stay: the last listed of those at one time', () => {
    const merged = transitionLine(TEN + 60, 'testsPassed', 'merged');
    const back = transitionLine(TEN + 60, 'merged', 'pending');
    const earlier = transitionLine(TEN, 'pending', 'testing');
    expect(latestEntered(joinedLines([earlier, merged]), FINAL)).toBe(true);
    expect(latestEntered(joinedLines([merged, earlier]), FINAL)).toBe(true);
    expect(latestEntered(joinedLines([merged, back]), FINAL)).toBe(false);
    expect(latestEntered(joinedLines([back, merged]), FINAL)).toBe(true);
    expect(latestEntered(joinedLines([transitionLine(TEN, 'x', 'y>merged')]), FINAL)).toBe(false);
  });

  it('keeps the transitions at or after an instant, the same string when all are', () => {
    const old = transitionLine(TEN, 'pending', 'testing');
    const recent = transitionLine(TEN + 3600, 'testing', 'pending');
    const both = joinedLines([old, recent]);
    expect(countedSince(both, TEN)).toBe(both);
    expect(countedSince(both, TEN + 1)).toBe(recent);
    expect(countedSince(both, TEN + 3601)).toBeUndefined();
  });

  it('counts the transitions it holds', () => {
    const three = [
      transitionLine(TEN, 'pending', 'testing'),
      transitionLine(TEN + 60, 'testing', 'pending'),
      transitionLine(TEN + 120, 'pending', 'testing'),
    ];
    expect(lineCount(joinedLines(three.slice(0, 1)))).toBe(1);
    expect(lineCount(joinedLines(three))).toBe(3);
    expect(lineCount(joinedLines([transitionLine(TEN, 'x', 'a\nb')]))).toBe(1);
  });
});

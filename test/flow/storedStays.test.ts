// A queue keeps a counted exit packed for the hours it remembers it; what it unpacks is the stay it
// packed, for every witness, every outcome, and times present or not (a poll has not yet seen the
// pull request gone; no later stay began).
import { describe, expect, it } from 'vitest';
import { packStay, unpackStay } from '../../src/flow/storedStays.js';
import type { PrStay } from '../../src/snapshot/prStayTypes.js';

/** 2026-01-01T10:00:00Z. */
const TEN = 1_767_261_600;

describe('stored stays', () => {
  it('gives back each counted stay it packed', () => {
    const stays: PrStay[] = [];
    for (const witness of ['event', 'poll'] as const) {
      for (const outcome of ['merged', 'failed', 'cancelled', 'unknown'] as const) {
        for (const goneBy of [undefined, TEN + 30.25]) {
          for (const restartedAt of [undefined, TEN + 95.5]) {
            stays.push({
              phase: 'counted',
              exit: {
                witness,
                outcome,
                leftAt: TEN + 0.125,
                countedAt: TEN + 2.5,
                goneBy,
                restartedAt,
              },
            });
          }
        }
      }
    }
    for (const stay of stays) {
      const packed = packStay(stay);
      expect(Array.isArray(packed)).toBe(true);
      expect(unpackStay(packed)).toEqual(stay);
    }
    expect(new Set(stays.map((stay) => JSON.stringify(packStay(stay)))).size).toBe(stays.length);
  });

  it('keeps entered and held stays as they are, and nothing as nothing', () => {
    const previous = {
      witness: 'poll',
      outcome: 'merged',
      leftAt: TEN,
      countedAt: TEN + 1,
      goneBy: TEN + 1,
      restartedAt: TEN + 60,
    } as const;
    const entered: PrStay = { phase: 'entered', enteredAt: TEN + 60, previous };
    const held: PrStay = {
      phase: 'held',
      held: {
        outcome: 'failed',
        enteredAt: TEN + 60,
        leftAt: TEN + 600,
        goneAt: TEN + 630,
        dueAt: TEN + 690,
      },
      previous: undefined,
    };
    expect(unpackStay(packStay(entered))).toBe(entered);
    expect(unpackStay(packStay(held))).toBe(held);
    expect(unpackStay(undefined)).toBeUndefined();
  });
});

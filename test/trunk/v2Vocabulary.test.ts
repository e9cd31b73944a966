import { describe, expect, it } from 'vitest';
import { priorityNameOf, v1Mode, v1Value } from '../../src/trunk/v2Vocabulary.js';

describe('v1 label values from v2 enum values', () => {
  it.each([
    ['notReady', 'not_ready'],
    ['testsPassed', 'tests_passed'],
    ['pendingFailure', 'pending_failure'],
    ['switchingModes', 'switching_modes'],
    ['mergeCommit', 'merge_commit'],
    ['bisectionSkipRedundantTests', 'bisection_skip_redundant_tests'],
    ['running', 'running'],
    ['off', 'off'],
    // Values Trunk may add: respelled, never dropped.
    ['squashAndSignOff', 'squash_and_sign_off'],
    ['awaitingCIResult', 'awaiting_ci_result'],
  ])('%s → %s', (v2, v1) => {
    expect(v1Value(v2)).toBe(v1);
  });

  it('renames the queue modes and respells an unknown one', () => {
    expect([v1Mode('queue'), v1Mode('graph'), v1Mode('stackedGraph')]).toEqual([
      'single',
      'parallel',
      'stacked_graph',
    ]);
  });

  it('names a priority only from its priorityName: the definition says not to infer one', () => {
    // QueueEntry.priorityName: "Either may still be absent on its own — do not infer one from the
    // presence of the other"; priorityValue: "some entries carry a value the queue never named".
    expect(priorityNameOf('high')).toBe('high');
    expect(priorityNameOf(undefined)).toBe('unknown');
    expect(priorityNameOf(null)).toBe('unknown');
  });

  it('cuts a value past 200 characters before respelling it: it is a label value', () => {
    // 150,000 capitals: a respelling that backtracks over the run took seconds on it.
    expect(v1Value('A'.repeat(150_000))).toBe(`${'a'.repeat(199)}…`);
    // 7 + 27 × 7 + 3 = 199 characters kept, then respelled.
    expect(v1Value(`pending${'Failure'.repeat(40)}`)).toBe(`pending${'_failure'.repeat(27)}_fai…`);
  });
});

import { describe, expect, it } from 'vitest';
import { FlowStandings, suspectAfterMs } from '../../src/trunk/flowStanding.js';

describe('suspectAfterMs', () => {
  it('is half the attempt timeout, and at most 2 s', () => {
    expect(suspectAfterMs(10_000)).toBe(2_000);
    expect(suspectAfterMs(3_000)).toBe(1_500);
    expect(suspectAfterMs(300)).toBe(150);
  });
});

describe('FlowStandings', () => {
  it('puts a flow in good standing only after a prompt answer, and out of it after a failure or a late answer', () => {
    const standings = new FlowStandings(2_000);
    expect(standings.isGood('web')).toBe(false);

    standings.record('web', 'answered', 150, 1_000);
    expect(standings.isGood('web')).toBe(true);
    expect(standings.goodCount).toBe(1);

    // A timeout or a network error.
    standings.record('web', 'failed', 10_000, 11_000);
    expect(standings.isGood('web')).toBe(false);
    expect(standings.goodCount).toBe(0);

    standings.record('web', 'answered', 200, 12_000);
    expect(standings.isGood('web')).toBe(true);
    // An answer that held its slot longer than the threshold (a gateway's 504 after 9 s).
    standings.record('web', 'answered', 2_001, 15_000);
    expect(standings.isGood('web')).toBe(false);
    expect(standings.goodCount).toBe(0);
  });

  it('forgets a flow an hour after its last request, and keeps one that keeps asking', () => {
    const standings = new FlowStandings(2_000);
    const hour = 60 * 60_000;
    standings.record('removed', 'answered', 10, 0);
    standings.record('kept', 'answered', 10, 0);
    standings.touch('kept', hour);
    standings.record('other', 'failed', 10, hour + 1);

    expect(standings.isGood('removed')).toBe(false);
    expect(standings.isGood('kept')).toBe(true);
    expect(standings.goodCount).toBe(1);
  });
});

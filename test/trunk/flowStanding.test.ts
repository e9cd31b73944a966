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
    const web = standings.of('web', 0);
    expect(web.good).toBe(false);

    standings.update(web, 'answered', 150, 1_000);
    expect(web.good).toBe(true);
    expect(standings.goodCount).toBe(1);

    // A timeout or a network error.
    standings.update(web, 'failed', 10_000, 11_000);
    expect(web.good).toBe(false);
    expect(standings.goodCount).toBe(0);

    standings.update(web, 'answered', 200, 12_000);
    expect(standings.of('web', 12_000)).toBe(web);
    expect(web.good).toBe(true);
    // An answer that held its slot longer than the threshold (a gateway's 504 after 9 s).
    standings.update(web, 'answered', 2_001, 15_000);
    expect(web.good).toBe(false);
    expect(standings.goodCount).toBe(0);
  });

  it('forgets a flow an hour after its last request, and keeps one that keeps asking', () => {
    const standings = new FlowStandings(2_000);
    const hour = 60 * 60_000;
    const removed = standings.of('removed', 0);
    const kept = standings.of('kept', 0);
    standings.update(removed, 'answered', 10, 0);
    standings.update(kept, 'answered', 10, 0);
    expect(standings.of('kept', hour)).toBe(kept);
    standings.update(standings.of('other', hour + 1), 'failed', 10, hour + 1);

    // Forgotten: asked again, it starts unproven.
    const removedAgain = standings.of('removed', hour + 1);
    expect(removedAgain).not.toBe(removed);
    expect(removedAgain.good).toBe(false);
    expect(standings.of('kept', hour + 1)).toBe(kept);
    expect(kept.good).toBe(true);
    expect(standings.goodCount).toBe(1);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Target } from '../../src/snapshot/types.js';
import { TriggeredPolls } from '../../src/webhooks/pollTriggers.js';

const QUEUE: Target = { kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' };
const OTHER_QUEUE: Target = { kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'release' };
const FLAKY: Target = { kind: 'flaky_tests', repo: 'github.com/acme/web', branch: '' };

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2026, 2, 2) });
});
afterEach(() => {
  vi.useRealTimers();
});

function recording() {
  const polls: { target: string; at: number }[] = [];
  const start = Date.now();
  const triggered = new TriggeredPolls((target) => {
    polls.push({ target: `${target.kind}:${target.branch}`, at: Date.now() - start });
  });
  return { polls, triggered };
}

describe('TriggeredPolls', () => {
  it('polls a queue 250 ms after its first event, once for the whole burst', () => {
    const { polls, triggered } = recording();
    expect(triggered.request(QUEUE)).toBe(true);
    vi.advanceTimersByTime(100);
    expect(triggered.request(QUEUE)).toBe(false);
    expect(triggered.request(QUEUE)).toBe(false);
    vi.advanceTimersByTime(1000);
    expect(polls).toEqual([{ target: 'merge_queue:main', at: 250 }]);
  });

  it('polls one queue by events at most every 5 s, and another queue independently', () => {
    const { polls, triggered } = recording();
    triggered.request(QUEUE);
    vi.advanceTimersByTime(1000);
    // Events 1 s and 2 s after the first poll share one poll, 5 s after the first.
    triggered.request(QUEUE);
    triggered.request(OTHER_QUEUE);
    vi.advanceTimersByTime(1000);
    triggered.request(QUEUE);
    vi.advanceTimersByTime(10_000);
    expect(polls).toEqual([
      { target: 'merge_queue:main', at: 250 },
      { target: 'merge_queue:release', at: 1250 },
      { target: 'merge_queue:main', at: 5250 },
    ]);
    // Long after, an event is again polled 250 ms later.
    triggered.request(QUEUE);
    vi.advanceTimersByTime(300);
    expect(polls.at(-1)).toEqual({ target: 'merge_queue:main', at: 12_250 });
  });

  it('walks a quarantine list by events at most once a minute', () => {
    const { polls, triggered } = recording();
    triggered.request(FLAKY);
    vi.advanceTimersByTime(1000);
    triggered.request(FLAKY);
    vi.advanceTimersByTime(58_000);
    expect(polls).toHaveLength(1);
    vi.advanceTimersByTime(2_000);
    expect(polls).toEqual([
      { target: 'flaky_tests:', at: 250 },
      { target: 'flaky_tests:', at: 60_250 },
    ]);
  });

  it('drops the waiting poll of a target that left the configuration', () => {
    const { polls, triggered } = recording();
    triggered.request(QUEUE);
    triggered.request(FLAKY);
    triggered.keepOnly([FLAKY]);
    vi.advanceTimersByTime(1000);
    expect(polls).toEqual([{ target: 'flaky_tests:', at: 250 }]);
  });
});

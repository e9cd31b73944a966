import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import {
  PausedPastStartBy,
  RequestLimiter,
  type ReleaseSlot,
  type RequestPriority,
} from '../../src/trunk/requestLimiter.js';

describe('RequestLimiter', () => {
  it('hands a freed slot to the next waiter and skips aborted ones', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 1000 });
    const releaseFirst = await limiter.acquire();
    const controller = new AbortController();
    const aborted = limiter.acquire(controller.signal);
    const order: string[] = [];
    const third = limiter.acquire().then((release) => {
      order.push('third');
      return release;
    });

    controller.abort(new Error('gone'));
    await expect(aborted).rejects.toThrow('gone');
    releaseFirst();
    releaseFirst(); // a second release must not free a slot twice
    const releaseThird = await third;

    expect(order).toEqual(['third']);
    let fourthStarted = false;
    const fourth = limiter.acquire().then((release) => {
      fourthStarted = true;
      return release;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fourthStarted).toBe(false);
    releaseThird();
    (await fourth)();
  });

  it('serves waiting follow-ups before new polls, each in arrival order', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 1e9 });
    const releaseFirst = await limiter.acquire();
    const order: string[] = [];
    const controller = new AbortController();
    const waiting = [
      ['new A', 'new_poll'],
      ['follow-up B', 'follow_up'],
      ['new C', 'new_poll'],
      ['follow-up D', 'follow_up'],
    ] as const;
    const granted = waiting.map(async ([name, priority]) => {
      const release = await limiter.acquire(undefined, priority);
      order.push(name);
      release();
    });
    // An aborted follow-up leaves its queue: it neither runs nor holds up the others.
    const aborted = limiter.acquire(controller.signal, 'follow_up');
    controller.abort(new Error('gone'));
    await expect(aborted).rejects.toThrow('gone');

    releaseFirst();
    await Promise.all(granted);
    expect(order).toEqual(['follow-up B', 'follow-up D', 'new A', 'new C']);
  });

  it("takes turns between flows: a big poll's follow-ups do not go ahead of another target's calls", async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 1e9 });
    const releaseFirst = await limiter.acquire(undefined, 'new_poll', undefined, 'big');
    const order: string[] = [];
    const request = async (name: string, priority: RequestPriority, flow: string) => {
      const release = await limiter.acquire(undefined, priority, undefined, flow);
      order.push(name);
      release();
    };
    // The big queue's lookups are all waiting when the small queue asks for its queue; the small
    // queue's own lookup comes later still.
    const granted = [
      ...Array.from({ length: 5 }, (_, index) => request(`big ${index + 1}`, 'follow_up', 'big')),
      request('small queue', 'new_poll', 'small'),
    ];
    releaseFirst();
    await granted[0];
    granted.push(request('small lookup', 'follow_up', 'small'));
    await Promise.all(granted);
    // Before flows, the five follow-ups went first and the small queue waited for all of them.
    expect(order).toEqual([
      'big 1',
      'small queue',
      'big 2',
      'small lookup',
      'big 3',
      'big 4',
      'big 5',
    ]);
  });

  it('keeps one slot for other targets: one flow never holds them all while another is about', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 3, maxPerSecond: 1e9 });
    const held: ReleaseSlot[] = [];
    const take = (flow: string): Promise<void> =>
      limiter.acquire(undefined, 'follow_up', undefined, flow).then((release) => {
        held.push(release);
      });
    // Alone, a flow may use every slot.
    await Promise.all([take('alone'), take('alone'), take('alone')]);
    expect(held).toHaveLength(3);
    for (const release of held.splice(0)) release();

    // Once another flow has asked for a slot, the hanging flow gets all but one...
    await take('small');
    held.splice(0).forEach((release) => {
      release();
    });
    const hanging = [take('hanging'), take('hanging'), take('hanging')];
    await Promise.all(hanging.slice(0, 2));
    let third = false;
    void hanging[2]?.then(() => (third = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(third).toBe(false);
    expect(held).toHaveLength(2);
    // ...and the small flow's next call gets the one left at once.
    await take('small');
    expect(held).toHaveLength(3);
    // When the small flow is done, its slot goes back to... nobody: the hanging flow still may not
    // hold every slot; it gets one when one of its own comes back.
    held[2]?.();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(third).toBe(false);
    held[0]?.();
    await hanging[2];
    expect(third).toBe(true);
  });

  it('told that several targets share it, keeps the slot free before the others have asked', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 2, maxPerSecond: 1e9, targets: () => 2 });
    const first = await limiter.acquire(undefined, 'follow_up', undefined, 'hanging');
    let second = false;
    const waiting = limiter
      .acquire(undefined, 'follow_up', undefined, 'hanging')
      .then((release) => {
        second = true;
        return release;
      });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(second).toBe(false);
    // The other target's first call, the first time it asks, gets the slot at once.
    (await limiter.acquire(undefined, 'new_poll', undefined, 'small'))();
    first();
    (await waiting)();
    expect(second).toBe(true);
  });

  it('spaces starts by 1/maxPerSecond', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 10, maxPerSecond: 20 });
    const started: number[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        const release = await limiter.acquire();
        started.push(Date.now());
        release();
      }),
    );
    expect((started[3] ?? 0) - (started[0] ?? 0)).toBeGreaterThanOrEqual(150 - 5);
  });

  it('listens once on a signal that many waiting requests share, and leaves no listener', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 1e9 });
    const releaseFirst = await limiter.acquire();
    const shared = new AbortController();
    const waiting = Array.from({ length: 50 }, () => limiter.acquire(shared.signal));
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);

    // Granting every waiter removes the listener once the last one leaves.
    releaseFirst();
    for (const acquired of waiting) (await acquired)();
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);

    // Aborting rejects every waiter of that signal and no other.
    const releaseAgain = await limiter.acquire();
    const doomed = new AbortController();
    const aborted = Array.from({ length: 3 }, () => limiter.acquire(doomed.signal));
    const other = limiter.acquire(new AbortController().signal);
    doomed.abort(new Error('poll stopped'));
    for (const rejected of aborted) await expect(rejected).rejects.toThrow('poll stopped');
    releaseAgain();
    (await other)();
    expect(getEventListeners(doomed.signal, 'abort')).toHaveLength(0);
  });

  it('starts at once when the next start is due within a millisecond, above 1,000 a second', async () => {
    // A frozen clock: every start falls in the same millisecond.
    const fast = new RequestLimiter({ maxConcurrent: 10, maxPerSecond: 1e6, now: () => 1000 });
    const slow = new RequestLimiter({ maxConcurrent: 10, maxPerSecond: 1000, now: () => 1000 });
    const beforeAnyTimer = (): Promise<string> =>
      new Promise((resolve) => {
        setImmediate(resolve, 'a timer was needed');
      });
    (await fast.acquire())();
    // Sleeping 0.001 ms would wait for a timer, which fires after setImmediate.
    expect(await Promise.race([fast.acquire().then(() => 'at once'), beforeAnyTimer()])).toBe(
      'at once',
    );
    // At 1,000 a second the spacing is a whole millisecond and is still kept.
    (await slow.acquire())();
    expect(await Promise.race([slow.acquire().then(() => 'at once'), beforeAnyTimer()])).toBe(
      'a timer was needed',
    );
  });

  it('gives up on a waiting request once a pause that began while it queued outlasts its start-by time', async () => {
    let now = 1_000_000;
    const limiter = new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 1000, now: () => now });
    const releaseFirst = await limiter.acquire();
    // Queued for the only slot before any pause: its poll must start by now + 200 ms.
    const waiting = limiter.acquire(undefined, 'new_poll', now + 200);
    // The request holding the slot gets a 429 with Retry-After: 2 s; the pause is set before its
    // slot is released, as the transport does.
    limiter.pauseUntil(now + 2_000);
    releaseFirst();
    const error: unknown = await waiting.catch((rejection: unknown) => rejection);
    expect(error).toBeInstanceOf(PausedPastStartBy);
    expect(error instanceof PausedPastStartBy && error.pausedUntil).toBe(now + 2_000);

    // It gave its slot back: a request that may start after the pause gets it.
    now += 2_000;
    const release = await limiter.acquire(undefined, 'new_poll', now + 200);
    release();
  });

  it('gives up at once, without queueing for a slot, when a pause already outlasts the start-by time', async () => {
    const now = 1_000_000;
    const limiter = new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 1000, now: () => now });
    const releaseFirst = await limiter.acquire();
    limiter.pauseUntil(now + 2_000);
    // The only slot stays taken: only a check made before queueing can answer this request.
    const error: unknown = await limiter
      .acquire(undefined, 'new_poll', now + 200)
      .catch((rejection: unknown) => rejection);
    expect(error).toBeInstanceOf(PausedPastStartBy);
    releaseFirst();
  });

  it('rejects limits that would block forever', () => {
    expect(() => new RequestLimiter({ maxConcurrent: 0, maxPerSecond: 1 })).toThrow(RangeError);
    expect(() => new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 0 })).toThrow(RangeError);
  });
});

import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { PausedPastStartBy, RequestLimiter } from '../../src/trunk/requestLimiter.js';

describe('RequestLimiter', () => {
  it('hands a freed slot to the next waiter and skips aborted ones', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 1000 });
    const releaseFirst = await limiter.acquire('t');
    const controller = new AbortController();
    const aborted = limiter.acquire('t', controller.signal);
    const order: string[] = [];
    const third = limiter.acquire('t').then((release) => {
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
    const fourth = limiter.acquire('t').then((release) => {
      fourthStarted = true;
      return release;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(fourthStarted).toBe(false);
    releaseThird();
    (await fourth)();
  });

  it('serves waiting requests in arrival order, whatever their target', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 1e9 });
    const releaseFirst = await limiter.acquire('a');
    const order: string[] = [];
    const controller = new AbortController();
    const granted = ['a', 'b', 'a', 'c'].map(async (target, index) => {
      const release = await limiter.acquire(target);
      order.push(`${target}${index}`);
      release('answered');
    });
    // An aborted request leaves the queue: it neither runs nor holds up the others.
    const aborted = limiter.acquire('b', controller.signal);
    controller.abort(new Error('gone'));
    await expect(aborted).rejects.toThrow('gone');

    releaseFirst('answered');
    await Promise.all(granted);
    expect(order).toEqual(['a0', 'b1', 'a2', 'c3']);
  });

  it('keeps the last slot for answered targets once one has answered, however many others never do', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 3, maxPerSecond: 1e9 });
    // Before any answer nothing is kept back: three targets that will hang get every slot.
    const first = [
      await limiter.acquire('hang1'),
      await limiter.acquire('hang2'),
      await limiter.acquire('hang3'),
    ];
    for (const release of first) release('failed');
    (await limiter.acquire('healthy'))('answered');
    const held = [await limiter.acquire('hang1'), await limiter.acquire('hang2')];
    // One slot is free, yet the third hanging target and a target yet to answer wait for it...
    const granted: string[] = [];
    const waiting = ['hang3', 'new'].map((target) =>
      limiter.acquire(target).then((release) => {
        granted.push(target);
        return release;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(granted).toEqual([]);
    // ...while the answered target gets it at once, and leaves it free again.
    (await limiter.acquire('healthy'))('answered');
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(granted).toEqual([]);
    // A hanging target's slot coming back goes to the next of them in turn: none starves.
    held[0]?.('failed');
    const hang3 = await waiting[0];
    expect(granted).toEqual(['hang3']);
    held[1]?.('failed');
    const newcomer = await waiting[1];
    expect(granted).toEqual(['hang3', 'new']);
    // An answer lifts the rule for its target: hang3 may take the last slot again.
    hang3?.('answered');
    const again = [await limiter.acquire('hang3'), await limiter.acquire('hang3')];
    for (const release of [...again, newcomer]) release?.();
  });

  it('spaces starts by 1/maxPerSecond', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 10, maxPerSecond: 20 });
    const started: number[] = [];
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        const release = await limiter.acquire('t');
        started.push(Date.now());
        release();
      }),
    );
    // 150 ms reserved; half of it held, as a busy machine may run the first start's continuation
    // late: without the spacing the four start within a millisecond.
    expect((started[3] ?? 0) - (started[0] ?? 0)).toBeGreaterThanOrEqual(150 / 2);
  });

  it('holds the next start back when its spacing is longer than a timer holds (24.8 days)', async () => {
    // One request in 115 days: the second start's wait of 1e10 ms overflowed Node's timer, which
    // fired after 1 ms, so the limit let requests through unspaced.
    const limiter = new RequestLimiter({ maxConcurrent: 2, maxPerSecond: 1e-7 });
    (await limiter.acquire('t'))();
    const controller = new AbortController();
    let secondStarted = false;
    const second = limiter.acquire('t', controller.signal).then(() => {
      secondStarted = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(secondStarted).toBe(false);
    controller.abort(new Error('done waiting'));
    await expect(second).rejects.toThrow();
  });

  it('leaves no listener on a signal once its waiting requests are granted or aborted', async () => {
    const limiter = new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 1e9 });
    const releaseFirst = await limiter.acquire('t');
    const shared = new AbortController();
    const waiting = Array.from({ length: 5 }, () => limiter.acquire('t', shared.signal));

    releaseFirst();
    for (const acquired of waiting) (await acquired)();
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);

    // Aborting rejects every waiter of that signal and no other.
    const releaseAgain = await limiter.acquire('t');
    const doomed = new AbortController();
    const aborted = Array.from({ length: 3 }, () => limiter.acquire('t', doomed.signal));
    const other = limiter.acquire('t', new AbortController().signal);
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
    (await fast.acquire('t'))();
    // Sleeping 0.001 ms would wait for a timer, which fires after setImmediate.
    expect(await Promise.race([fast.acquire('t').then(() => 'at once'), beforeAnyTimer()])).toBe(
      'at once',
    );
    // At 1,000 a second the spacing is a whole millisecond and is still kept.
    (await slow.acquire('t'))();
    expect(await Promise.race([slow.acquire('t').then(() => 'at once'), beforeAnyTimer()])).toBe(
      'a timer was needed',
    );
  });

  it('gives up on a waiting request once a pause that began while it queued outlasts its start-by time', async () => {
    let now = 1_000_000;
    const limiter = new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 1000, now: () => now });
    const releaseFirst = await limiter.acquire('t');
    // Queued for the only slot before any pause: its poll must start by now + 200 ms.
    const waiting = limiter.acquire('t', undefined, now + 200);
    // The request holding the slot gets a 429 with Retry-After: 2 s; the pause is set before its
    // slot is released, as the transport does.
    limiter.pauseUntil(now + 2_000);
    releaseFirst();
    const error: unknown = await waiting.catch((rejection: unknown) => rejection);
    expect(error).toBeInstanceOf(PausedPastStartBy);
    expect(error instanceof PausedPastStartBy && error.pausedUntil).toBe(now + 2_000);

    // It gave its slot back: a request that may start after the pause gets it.
    now += 2_000;
    const release = await limiter.acquire('t', undefined, now + 200);
    release();
  });

  it('gives up at once, without queueing for a slot, when a pause already outlasts the start-by time', async () => {
    const now = 1_000_000;
    const limiter = new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 1000, now: () => now });
    const releaseFirst = await limiter.acquire('t');
    limiter.pauseUntil(now + 2_000);
    // The only slot stays taken: only a check made before queueing can answer this request.
    const error: unknown = await limiter
      .acquire('t', undefined, now + 200)
      .catch((rejection: unknown) => rejection);
    expect(error).toBeInstanceOf(PausedPastStartBy);
    releaseFirst();
  });

  it('rejects limits that would block forever', () => {
    expect(() => new RequestLimiter({ maxConcurrent: 0, maxPerSecond: 1 })).toThrow(RangeError);
    expect(() => new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 0 })).toThrow(RangeError);
  });
});

import { describe, expect, it } from 'vitest';
import { RequestLimiter } from '../../src/trunk/requestLimiter.js';

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

  it('rejects limits that would block forever', () => {
    expect(() => new RequestLimiter({ maxConcurrent: 0, maxPerSecond: 1 })).toThrow(RangeError);
    expect(() => new RequestLimiter({ maxConcurrent: 1, maxPerSecond: 0 })).toThrow(RangeError);
  });
});

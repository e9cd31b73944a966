import { describe, expect, it } from 'vitest';
import { BcryptQueue, QUEUE_FULL } from '../../src/server/bcryptQueue.js';

/** A queue whose tasks each wait until the test ends them, in the order they started. */
function heldQueue(
  limits = { perAddress: 4, total: 32 },
  failuresOf: (address: string) => number = () => 0,
) {
  const queue = new BcryptQueue(limits, failuresOf);
  const started: string[] = [];
  const endings: (() => void)[] = [];
  const run = (address: string, name: string) =>
    queue.run(address, () => {
      started.push(name);
      return new Promise<string>((resolve) =>
        endings.push(() => {
          resolve(name);
        }),
      );
    });
  /** Ends the running task and lets the next one start. */
  const endRunning = async () => {
    endings.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { run, started, endRunning };
}

describe('BcryptQueue', () => {
  it("runs one task at a time, and a second address before the first address's next ones", async () => {
    const { run, started, endRunning } = heldQueue();
    const first = ['a0', 'a1', 'a2', 'a3', 'a4'].map((name) => run('10.0.0.1', name));
    const second = run('10.0.0.2', 'b0');
    const third = ['c0', 'c1'].map((name) => run('10.0.0.3', name));
    expect(started).toEqual(['a0']);
    for (let turn = 0; turn < 7; turn++) await endRunning();
    expect(started).toEqual(['a0', 'b0', 'c0', 'a1', 'c1', 'a2', 'a3', 'a4']);
    await endRunning();
    expect(await Promise.all([...first, second, ...third])).toEqual([
      'a0',
      'a1',
      'a2',
      'a3',
      'a4',
      'b0',
      'c0',
      'c1',
    ]);
  });

  it('refuses an address past its places in line, without running its task', async () => {
    const { run, started, endRunning } = heldQueue({ perAddress: 2, total: 32 });
    const lined = ['a0', 'a1', 'a2'].map((name) => run('10.0.0.1', name));
    expect(await run('10.0.0.1', 'a3')).toBe(QUEUE_FULL);
    // Another address still has its places.
    const other = run('10.0.0.2', 'b0');
    for (let turn = 0; turn < 4; turn++) await endRunning();
    expect(await Promise.all([...lined, other])).toEqual(['a0', 'a1', 'a2', 'b0']);
    expect(started).toEqual(['a0', 'b0', 'a1', 'a2']);
  });

  it('gives a newcomer the newest place of the longest line when every place is taken', async () => {
    const { run, started, endRunning } = heldQueue({ perAddress: 3, total: 4 });
    const a = ['a0', 'a1', 'a2', 'a3'].map((name) => run('10.0.0.1', name));
    const b = run('10.0.0.2', 'b0');
    // Four wait (a1, a2, a3, b0): every place is taken, and 10.0.0.1's line is the longest.
    const c = run('10.0.0.3', 'c0');
    expect(await a[3]).toBe(QUEUE_FULL);
    // Every place is taken again and no line is longer than 10.0.0.1's own (a1, a2): refused.
    expect(await run('10.0.0.1', 'a4')).toBe(QUEUE_FULL);
    for (let turn = 0; turn < 5; turn++) await endRunning();
    expect(started).toEqual(['a0', 'b0', 'c0', 'a1', 'a2']);
    expect(await Promise.all([...a.slice(0, 3), b, c])).toEqual(['a0', 'a1', 'a2', 'b0', 'c0']);
  });

  it('gives a newcomer from an address without recent failures the place of a waiter from one with them, however long the lines', async () => {
    // 10.0.0.1 and 10.0.0.2 failed lately, as a flood's addresses do; 10.0.0.3 (a new scraper) did not.
    const failures = new Map([
      ['10.0.0.1', 1],
      ['10.0.0.2', 1],
      ['10.0.0.4', 1],
      ['10.0.0.5', 5],
    ]);
    const { run, started, endRunning } = heldQueue(
      { perAddress: 4, total: 2 },
      (address) => failures.get(address) ?? 0,
    );
    const running = run('10.0.0.9', 'x0');
    const a = run('10.0.0.1', 'a0');
    const b = run('10.0.0.2', 'b0');
    // Every place is taken by a line as long as the scraper's would be: the failures decide.
    const scraper = run('10.0.0.3', 's0');
    expect(await a).toBe(QUEUE_FULL);
    // A newcomer from a failing address takes the place of a failing waiter, never the scraper's.
    const c = run('10.0.0.4', 'c0');
    expect(await b).toBe(QUEUE_FULL);
    // One whose address failed more than any waiter's is refused.
    expect(await run('10.0.0.5', 'd0')).toBe(QUEUE_FULL);
    for (let turn = 0; turn < 3; turn++) await endRunning();
    expect(started).toEqual(['x0', 's0', 'c0']);
    expect(await Promise.all([running, scraper, c])).toEqual(['x0', 's0', 'c0']);
  });

  it('runs at once again when the line is empty', async () => {
    const { run, started, endRunning } = heldQueue();
    const one = run('10.0.0.1', 'a0');
    await endRunning();
    expect(await one).toBe('a0');
    const two = run('10.0.0.1', 'a1');
    expect(started).toEqual(['a0', 'a1']);
    await endRunning();
    expect(await two).toBe('a1');
  });
});

// The rule that keeps targets whose requests hang out of the last slot (FairSlots, FlowStandings).
// Taking turns and the one-flow cap are tested through the limiter in requestLimiter.test.ts.
import { describe, expect, it } from 'vitest';
import { FairSlots, type SlotGrant } from '../../src/trunk/fairSlots.js';
import type { RequestOutcome } from '../../src/trunk/flowStanding.js';

const SUSPECT_AFTER_MS = 2_000;

/** FairSlots on a clock the test moves, shared by `targets` targets. */
function rig(maxConcurrent: number, targets = 13, maxFlowsInProgress?: number) {
  const clock = { now: 1_000_000 };
  const slots = new FairSlots({
    maxConcurrent,
    now: () => clock.now,
    targets: () => targets,
    suspectAfterMs: SUSPECT_AFTER_MS,
    ...(maxFlowsInProgress === undefined ? {} : { maxFlowsInProgress }),
  });
  /** Takes a slot for `key` and sends at once; the promise settles when the slot is granted. */
  const take = async (key: string): Promise<SlotGrant> => {
    const grant = await slots.take(undefined, 'new_poll', key);
    slots.started(grant);
    return grant;
  };
  /** One request of `key` that ends with `outcome` after `durationMs` (it must get a slot at once). */
  const finish = async (key: string, outcome: RequestOutcome, durationMs = 50): Promise<void> => {
    const grant = await take(key);
    clock.now += durationMs;
    slots.release(grant, outcome);
  };
  return { clock, slots, take, finish };
}

/** Whether `promise` has settled once pending callbacks have run (a granted slot resolves at once). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('FairSlots: flows whose requests hang', () => {
  it('keep out of the last slot once they hold the others, while a flow in good standing gets it at once', async () => {
    const { slots, take, finish } = rig(4);
    await finish('healthy', 'answered');
    // Four queues whose last request timed out; three of them hold a slot again.
    for (const key of ['hang1', 'hang2', 'hang3', 'hang4']) await finish(key, 'failed', 10_000);
    const hanging = [await take('hang1'), await take('hang2'), await take('hang3')];

    // One slot is free, yet the fourth suspect and a target that has never answered wait for it.
    const fourth = take('hang4');
    const unproven = take('new');
    expect(await settled(fourth)).toBe(false);
    expect(await settled(unproven)).toBe(false);
    // Before the rule, taking turns gave it to hang4, and the healthy queue waited a whole timeout.
    const healthy = take('healthy');
    expect(await settled(healthy)).toBe(true);
    // Given back, it stays free for flows in good standing.
    slots.release(await healthy, 'answered');
    expect(await settled(fourth)).toBe(false);

    // A suspect's slot coming back goes to the others in turn: none of them starves.
    slots.release(hanging[0] as SlotGrant, 'failed');
    expect(await settled(fourth)).toBe(true);
    slots.release(hanging[1] as SlotGrant, 'failed');
    expect(await settled(unproven)).toBe(true);
  });

  it('count a request running longer than the threshold as hanging, and an answer that late too', async () => {
    const { clock, slots, take, finish } = rig(3);
    await finish('healthy', 'answered');
    await finish('slow', 'answered');
    await finish('hang', 'failed', 10_000);
    await finish('other', 'failed', 10_000);

    const slow = await take('slow');
    const hang = await take('hang');
    clock.now += SUSPECT_AFTER_MS + 1;

    // slow has run past the threshold: with hang, flows not in good standing hold 2 of 3 slots.
    const other = take('other');
    expect(await settled(other)).toBe(false);
    const healthy = take('healthy');
    expect(await settled(healthy)).toBe(true);
    slots.release(await healthy, 'answered');

    // Answered, but late: slow stays out of the last slot.
    slots.release(slow, 'answered');
    expect(await settled(other)).toBe(true);
    const slowAgain = take('slow');
    expect(await settled(slowAgain)).toBe(false);
    // A prompt answer puts it back in good standing: it may have the last slot again.
    slots.release(hang, 'failed');
    const slowGrant = await slowAgain;
    clock.now += 100;
    slots.release(slowGrant, 'answered');
    await take('hang');
    expect(await settled(take('slow'))).toBe(true);
  });

  it('do not count a request waiting to start (rate, Retry-After pause) as running', async () => {
    const { clock, slots, take, finish } = rig(3);
    for (const key of ['healthy', 'paused']) await finish(key, 'answered');
    for (const key of ['hang', 'hang2']) await finish(key, 'failed', 10_000);
    await take('hang');
    // Granted, never sent: FairSlots.started() is called once the limiter lets it go.
    const paused = await slots.take(undefined, 'new_poll', 'paused');
    clock.now += SUSPECT_AFTER_MS + 1;
    // Flows not in good standing hold one slot of three: the other suspect may have the last but one.
    expect(await settled(take('hang2'))).toBe(true);
    slots.release(paused);
  });

  it('keep nothing back while no flow is in good standing (at start, before any answer)', async () => {
    const { slots, take } = rig(2, 3);
    // Nobody has answered yet: both slots serve whoever asks.
    const first = await take('a');
    expect(await settled(take('b'))).toBe(true);
    slots.release(first, 'answered');
    // a answered: b (unproven) holds the one slot flows not in good standing may have.
    expect(await settled(take('c'))).toBe(false);
    expect(await settled(take('a'))).toBe(true);
  });

  it('do not limit a target left alone (after a reload): it may use every slot, whatever its standing', async () => {
    const { take, finish } = rig(4, 1);
    // A removed target's good standing is still remembered; the one left keeps timing out.
    await finish('removed', 'answered');
    await finish('only', 'failed', 10_000);
    const grants = [take('only'), take('only'), take('only'), take('only')];
    expect(await Promise.all(grants.map(settled))).toEqual([true, true, true, true]);
  });
});

describe('FairSlots: admission of new polls', () => {
  it('keeps at most maxFlowsInProgress flows in good standing in progress; the next new poll waits for one to end', async () => {
    const { slots, take, finish } = rig(8, 13, 2);
    for (const key of ['a', 'b', 'c', 'd']) await finish(key, 'answered');
    const a = await take('a');
    const b = await take('b');
    // Six slots are free, yet c's new poll waits: a and b are in progress.
    const c = take('c');
    const d = take('d');
    expect(await settled(c)).toBe(false);
    // A poll in progress goes on: its follow-ups never wait for admission.
    const aFollowUp = slots.take(undefined, 'follow_up', 'a');
    expect(await settled(aFollowUp)).toBe(true);
    // Nor do flows not in good standing (the last-slot rule bounds those): one never answered.
    expect(await settled(take('unproven'))).toBe(true);

    // a still holds its follow-up's slot: still in progress, nobody is let in.
    slots.release(a, 'answered');
    expect(await settled(c)).toBe(false);
    slots.release(await aFollowUp, 'answered');
    // a is done: c comes in, first come first served, and d still waits behind b and c.
    expect(await settled(c)).toBe(true);
    expect(await settled(d)).toBe(false);
    slots.release(b, 'answered');
    expect(await settled(d)).toBe(true);
  });

  it('lets the next one in when a flow in progress falls out of good standing, and forgets an aborted wait', async () => {
    const { slots, take, finish } = rig(8, 13, 1);
    for (const key of ['a', 'b', 'c']) await finish(key, 'answered');
    const a = await take('a');
    const gone = new AbortController();
    const b = slots.take(gone.signal, 'new_poll', 'b');
    const c = take('c');
    gone.abort(new Error('poll stopped'));
    await expect(b).rejects.toThrow('poll stopped');
    expect(await settled(c)).toBe(false);
    // a's request timed out while a still has a request waiting: a no longer counts, c comes in.
    const aNext = slots.take(undefined, 'follow_up', 'a');
    slots.release(a, 'failed');
    expect(await settled(c)).toBe(true);
    slots.release(await aNext);
  });
});

// Which body read a newcomer takes the place of when every slot is taken, on a clock the test
// moves: the slowest trickling reader, never a genuine delivery whose headers came and whose body
// is in the next read (docs/webhooks.md: "A delivery whose body arrives at once is never the
// slowest; a trickling sender is").
import { describe, expect, it } from 'vitest';
import { ConcurrentBodyReads } from '../../src/server/webhookBodyReads.js';

describe('ConcurrentBodyReads', () => {
  it('drops a trickling reader rather than a delivery whose body has not come yet, with each of 16 peers holding one', () => {
    let now = 0;
    const reads = new ConcurrentBodyReads({ total: 16, perPeer: 4 }, () => now);
    const dropped: string[] = [];
    // 16 peers each trickle one body: a byte in 5 s.
    for (let index = 0; index < 16; index += 1) {
      reads
        .acquire(`10.0.0.${String(index)}`, () => dropped.push(`trickler ${String(index)}`))
        .received(1);
    }
    now = 5000;
    reads.acquire('52.1.1.1', () => dropped.push('delivery'));
    // 1 ms later, before the delivery's body is read, another trickler comes.
    now = 5001;
    reads.acquire('10.0.1.1', () => dropped.push('trickler 16'));
    expect(dropped).toEqual(['trickler 0', 'trickler 1']);
  });

  it('drops the oldest when every reader is newer than the grace period', () => {
    let now = 0;
    const reads = new ConcurrentBodyReads({ total: 2, perPeer: 4 }, () => now);
    const dropped: string[] = [];
    // The first has sent some of its body, the second nothing yet: each may be a delivery.
    reads.acquire('10.0.0.1', () => dropped.push('first')).received(100);
    now = 10;
    reads.acquire('10.0.0.2', () => dropped.push('second'));
    now = 20;
    reads.acquire('10.0.0.3', () => dropped.push('third'));
    expect(dropped).toEqual(['first']);
  });
});

import { describe, expect, it } from 'vitest';
import { LookupMemories } from '../../../src/poller/v1/lookupMemories.js';
import type { Target } from '../../../src/snapshot/types.js';

const WEB: Target = { kind: 'merge_queue', repo: 'github.com/acme/web', branch: 'main' };
const API: Target = { kind: 'merge_queue', repo: 'github.com/acme/api', branch: 'main' };

describe('LookupMemories', () => {
  it('gives a kept target the same memory, at the recheck interval now configured', () => {
    const memories = new LookupMemories();
    const first = memories.of(WEB, 300);
    memories.keepOnly([WEB, API]);
    const again = memories.of({ ...WEB }, 60);
    expect(again).toBe(first);
    expect(again.recheckSeconds).toBe(60);
  });

  it('forgets a target that left, so it starts empty if it comes back', () => {
    const memories = new LookupMemories();
    const first = memories.of(WEB, 300);
    memories.keepOnly([API]);
    expect(memories.of(WEB, 300)).not.toBe(first);
  });
});

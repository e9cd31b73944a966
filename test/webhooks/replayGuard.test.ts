import { describe, expect, it } from 'vitest';
import { ReplayGuard } from '../../src/webhooks/replayGuard.js';

describe('ReplayGuard', () => {
  it('remembers an id for the window, then forgets it', () => {
    const guard = new ReplayGuard(300);
    guard.remember('msg_1', 1000);
    expect(guard.has('msg_1', 1299)).toBe(true);
    expect(guard.has('msg_1', 1300)).toBe(false);
    expect(guard.size).toBe(0);
  });

  it('holds at most its cap, forgetting the oldest first', () => {
    const guard = new ReplayGuard(300, 3);
    for (const id of ['a', 'b', 'c', 'd']) guard.remember(id, 1000);
    expect(guard.size).toBe(3);
    expect(guard.has('a', 1001)).toBe(false);
    expect(['b', 'c', 'd'].every((id) => guard.has(id, 1001))).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { MESSAGE_ID_MEMORY_SECONDS, ReplayGuard } from '../../src/webhooks/replayGuard.js';

const HOUR = 3600;

describe('ReplayGuard', () => {
  it("remembers an id past Svix's 27 hours of retries, then forgets it", () => {
    const guard = new ReplayGuard();
    guard.remember('msg_1', 1000);
    expect(MESSAGE_ID_MEMORY_SECONDS).toBeGreaterThanOrEqual(28 * HOUR);
    expect(guard.has('msg_1', 1000 + 27 * HOUR + 59 * 60)).toBe(true);
    expect(guard.has('msg_1', 1000 + MESSAGE_ID_MEMORY_SECONDS)).toBe(false);
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

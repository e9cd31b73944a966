import { targetKey, type Target } from '../../snapshot/types.js';
import { PullRequestLookupMemory } from './lookupPlan.js';

/**
 * The lookup memory of every polled merge queue, kept across sets of poll jobs: a reload builds new
 * jobs, and a queue polled before and after it must not forget the PRs it can skip, or its next
 * poll looks every PR up again (a burst of calls against an organization-wide rate limit).
 */
export class LookupMemories {
  readonly #memories = new Map<string, PullRequestLookupMemory>();

  /** The memory of `target`, created on first use, rechecking at the current setting. */
  of(target: Target, recheckSeconds: number): PullRequestLookupMemory {
    const key = targetKey(target);
    let memory = this.#memories.get(key);
    if (memory === undefined) {
      memory = new PullRequestLookupMemory(recheckSeconds, key);
      this.#memories.set(key, memory);
    }
    memory.recheckSeconds = recheckSeconds;
    return memory;
  }

  /** Forgets the targets not in `targets` (no longer configured, or moved to another shard). */
  keepOnly(targets: readonly Target[]): void {
    const kept = new Set(targets.map(targetKey));
    for (const key of this.#memories.keys()) {
      if (!kept.has(key)) this.#memories.delete(key);
    }
  }
}

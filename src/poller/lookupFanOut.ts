// How a poll sends its PR lookups: a few at a time, so that no target floods the request queue that
// every target shares (trunk/requestLimiter.ts serves it in arrival order).

/** Lookups one poll keeps in progress at most. */
export const LOOKUPS_AT_A_TIME = 4;

/**
 * Lookups one poll keeps in progress with `maxConcurrentRequests` slots: LOOKUPS_AT_A_TIME, and
 * never every slot, so a target whose lookups hang leaves one to the others.
 */
export function lookupsAtATime(maxConcurrentRequests: number): number {
  return Math.max(1, Math.min(LOOKUPS_AT_A_TIME, maxConcurrentRequests - 1));
}

/**
 * Calls `lookUp` for every item, at most `atATime` calls in progress, and resolves with the answers
 * in the items' order. The first rejection rejects at once, and no further call starts.
 * `allStarted` is called once the last call has started (at once when there are no items).
 */
export async function mapAtMost<T, R>(
  items: readonly T[],
  atATime: number,
  lookUp: (item: T) => Promise<R>,
  allStarted?: () => void,
): Promise<R[]> {
  const answers = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  if (items.length === 0) allStarted?.();
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next++;
      try {
        const answer = lookUp(items[index] as T);
        if (next === items.length) allStarted?.();
        answers[index] = await answer;
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(atATime, items.length) }, worker));
  return answers;
}

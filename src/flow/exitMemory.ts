// What a queue's webhook ledger remembers of exits, and how an update changes it: a mutable copy
// (Working) that counts an exit, holds or settles one, and forgets within the bounds, then is
// frozen back into WebhookExits. Shared by the poll side and the event side (webhookExits.ts).
import {
  COUNTED_EXIT_RETENTION_SECONDS,
  EXIT_SOURCES,
  MAX_REMEMBERED_EXITS,
  type CountedExit,
  type ExitSource,
  type PendingExit,
  type WebhookExits,
} from '../snapshot/webhookExitTypes.js';
import type { FlowEvent } from '../snapshot/queueFlowTypes.js';

/** No exits counted yet; both sources at 0 from the start, so the first one is an increase. */
export function emptyWebhookExits(): WebhookExits {
  return {
    counted: new Map(),
    pending: new Map(),
    enteredAt: new Map(),
    bySource: new Map(EXIT_SOURCES.map((source) => [source, 0])),
  };
}

/** The mutable copy one update works on; settled() gives the WebhookExits it ends with. */
export interface Working {
  readonly counted: Map<number, CountedExit>;
  readonly pending: Map<number, PendingExit>;
  readonly enteredAt: Map<number, number>;
  readonly bySource: Map<ExitSource, number>;
  /** The exits counted by this update, for the ledger's counts. */
  readonly events: FlowEvent[];
}

/** A copy of `state` (empty when webhooks were off) to change. */
export function working(state: WebhookExits | undefined): Working {
  const from = state ?? emptyWebhookExits();
  return {
    counted: new Map(from.counted),
    pending: new Map(from.pending),
    enteredAt: new Map(from.enteredAt),
    bySource: new Map(from.bySource),
    events: [],
  };
}

/** The remembered exits after the update (its maps, no longer changed). */
export function settled(work: Working): WebhookExits {
  const { counted, pending, enteredAt, bySource } = work;
  return { counted, pending, enteredAt, bySource };
}

/** Counts one exit and remembers it, as the PR's latest (a Map keeps the order of counting). */
export function countExit(
  work: Working,
  prNumber: number,
  secondsInQueue: number,
  exit: CountedExit,
): void {
  work.events.push({ kind: 'exit', outcome: exit.outcome, secondsInQueue });
  work.bySource.set(exit.source, (work.bySource.get(exit.source) ?? 0) + 1);
  work.counted.delete(prNumber);
  work.counted.set(prNumber, exit);
  work.enteredAt.delete(prNumber);
}

/** Counts a held exit from its poll now. */
export function countFromPoll(
  work: Working,
  prNumber: number,
  held: PendingExit,
  now: number,
): void {
  work.pending.delete(prNumber);
  countExit(work, prNumber, held.leftAt - held.enteredAt, {
    source: 'poll',
    outcome: held.outcome,
    leftAt: held.leftAt,
    countedAt: now,
    goneBy: held.goneAt,
    restartedAt: undefined,
  });
}

/**
 * Counts held exits whose event had its time, and forgets what no witness can still need. Over a
 * cap, the oldest go first: a held exit is then counted from the poll rather than lost.
 */
export function settle(work: Working, now: number): void {
  for (const [prNumber, held] of [...work.pending]) {
    if (held.dueAt <= now) countFromPoll(work, prNumber, held, now);
  }
  for (const [prNumber, held] of [...work.pending]) {
    if (work.pending.size <= MAX_REMEMBERED_EXITS) break;
    countFromPoll(work, prNumber, held, now);
  }
  for (const [prNumber, exit] of [...work.counted]) {
    // Until a poll is done with it, an exit must stay to keep that poll from counting it again.
    if (exit.goneBy !== undefined && now - exit.countedAt > COUNTED_EXIT_RETENTION_SECONDS) {
      work.counted.delete(prNumber);
    }
  }
  dropOldest(work.counted);
  dropOldest(work.enteredAt);
}

function dropOldest(map: Map<number, unknown>): void {
  for (const key of [...map.keys()]) {
    if (map.size <= MAX_REMEMBERED_EXITS) return;
    map.delete(key);
  }
}

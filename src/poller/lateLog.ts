// The log's share of polls that outrun their interval (pollRun.ts): each is counted in
// trunk_exporter_poll_overruns_total and shows its target's target_up 0, so the log only has to say
// that polls are late and name one. At most one line a minute per kind: 10,000 targets late every
// interval made 10,000 lines a minute, which buried every other line.
import type { Logger } from '../log/logger.js';
import type { PollKind, Target } from '../snapshot/types.js';
import { targetKey } from '../snapshot/types.js';

/** How long after a line no other late poll of the same kind is logged. */
export const LATE_LOG_INTERVAL_MS = 60_000;

/** How many of the late targets not logged the next line names, beside how many there were. */
const EXAMPLES = 3;

/** The late polls of one kind since its last line. */
interface Unlogged {
  polls: number;
  /** Keys of the targets they were of (at most every target, for one minute). */
  readonly targets: Set<string>;
  readonly examples: string[];
}

/** What the line calls a target. */
function describe(target: Target): string {
  return target.kind === 'merge_queue'
    ? `merge queue ${target.repo} ${target.branch}`
    : `quarantine list of ${target.repo}`;
}

/** Logs polls that run late, at most once per LATE_LOG_INTERVAL_MS per kind of target. */
export class LateLog {
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #loggedAt = new Map<PollKind, number>();
  readonly #unlogged = new Map<PollKind, Unlogged>();

  constructor(logger: Logger, now: () => number = Date.now) {
    this.#logger = logger;
    this.#now = now;
  }

  /** A poll of `target` is still running after its interval of `intervalSeconds`. */
  late(target: Target, intervalSeconds: number): void {
    const { kind } = target;
    const now = this.#now();
    const loggedAt = this.#loggedAt.get(kind);
    if (loggedAt !== undefined && now - loggedAt < LATE_LOG_INTERVAL_MS) {
      const unlogged = this.#unlogged.get(kind) ?? { polls: 0, targets: new Set(), examples: [] };
      const key = targetKey(target);
      if (!unlogged.targets.has(key) && unlogged.examples.length < EXAMPLES) {
        unlogged.examples.push(describe(target));
      }
      unlogged.targets.add(key);
      unlogged.polls++;
      this.#unlogged.set(kind, unlogged);
      return;
    }
    const unlogged = this.#unlogged.get(kind);
    this.#loggedAt.set(kind, now);
    this.#unlogged.delete(kind);
    const others =
      unlogged === undefined
        ? ''
        : `; ${String(unlogged.polls)} more late polls of ${String(unlogged.targets.size)} ` +
          `${kind} targets in the last minute were not logged (e.g. ${unlogged.examples.join(', ')})`;
    this.#logger.warn(
      {
        kind,
        repo: target.repo,
        branch: target.branch || undefined,
        intervalSeconds,
        ...(unlogged === undefined
          ? {}
          : { notLoggedPolls: unlogged.polls, notLoggedTargets: unlogged.targets.size }),
      },
      `poll of ${describe(target)} is late: still running after its interval of ${String(intervalSeconds)}s; ` +
        'it counts as down until a poll finishes (too many targets or requests for ' +
        `trunk.maxRequestsPerSecond, or a slow API)${others}; logged at most once a minute per ` +
        'kind, every late poll is counted in trunk_exporter_poll_overruns_total',
    );
  }
}

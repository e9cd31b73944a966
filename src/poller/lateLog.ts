// The log's share of polls that outrun their interval (pollRun.ts): each is counted in
// trunk_exporter_poll_overruns_total and shows its target's target_up 0, so the log only has to say
// that polls are late and name one. At most one line a minute per kind: an overloaded exporter
// would otherwise write a line per target and interval, and bury every other line.
import { LineThrottle } from '../log/lineThrottle.js';
import type { Logger } from '../log/logger.js';
import type { PollKind, Target } from '../snapshot/types.js';
import { targetKey } from '../snapshot/types.js';

/** How long after a line no other late poll of the same kind is logged. */
export const LATE_LOG_INTERVAL_MS = 60_000;

/** How many of the late targets not logged the next line names, beside how many there were. */
const EXAMPLES = 3;

/** The late polls of one kind held back since its last line. */
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
  readonly #lines: LineThrottle<PollKind, Unlogged>;

  constructor(logger: Logger, now: () => number = Date.now) {
    this.#logger = logger;
    this.#lines = new LineThrottle(
      LATE_LOG_INTERVAL_MS,
      () => ({ polls: 0, targets: new Set(), examples: [] }),
      now,
    );
  }

  /** A poll of `target` is still running after its interval of `intervalSeconds`. */
  late(target: Target, intervalSeconds: number): void {
    const { kind } = target;
    const admitted = this.#lines.admit(kind, (held) => {
      const key = targetKey(target);
      if (!held.targets.has(key) && held.examples.length < EXAMPLES) {
        held.examples.push(describe(target));
      }
      held.targets.add(key);
      held.polls++;
    });
    if (admitted === undefined) return;
    const unlogged = admitted.held;
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

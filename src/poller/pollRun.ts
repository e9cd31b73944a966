// One poll of one target, from admission to the store: its deadline, the overrun it may become, and
// the snapshot or the failure it records.
import type { Logger } from '../log/logger.js';
import type { SnapshotStore } from '../snapshot/store.js';
import type { TestingAttempts } from '../snapshot/testingAttemptTypes.js';
import type { PartReads, Snapshot, Target } from '../snapshot/types.js';
import { TrunkApiError } from '../trunk/errors.js';
import { isAuthenticationFailure, whatToCheck } from './failureHint.js';
import type { LateLog } from './lateLog.js';
import type { PollAdmission } from './pollAdmission.js';
import type { PollObserver } from './pollObserver.js';
import type { UnreadParts } from './pollReads.js';
import type { QueueFlowUpdate } from '../flow/queueFlow.js';
import type { ReadOptions } from './readOptions.js';

/** A successful poll: its snapshot and, for a merge queue, how its flow ledger takes it. */
export interface PollResult {
  readonly snapshot: Snapshot;
  readonly queueFlow?: QueueFlowUpdate;
  /** Through API v2: the queue's testing attempts after this poll. */
  readonly testingAttempts?: TestingAttempts | undefined;
  /** What the poll recorded of the reads of each part it read (PollReads). */
  readonly partReads?: PartReads;
  /**
   * Set when part of the target could not be read now (one of its lists failed) and the snapshot
   * holds the rest: the target is down, and says why, as after a failed poll.
   */
  readonly unread?: UnreadParts;
}

/** What recording a poll's outcome needs. */
interface PollRunContext {
  readonly store: SnapshotStore;
  readonly logger: Logger;
  /** Told about each poll that outruns its interval (the overrun counter). */
  readonly pollObserver?: PollObserver;
  /** Logs the polls that outrun their interval, a few lines however many targets are late. */
  readonly lateLog: LateLog;
}

/**
 * Runs one poll of `target` within its interval, behind `admission`, and records its outcome in the
 * store: the snapshot (and the ledgers it moves) or the failure, with one log line naming what to
 * check. Resolves whether it succeeded; never rejects.
 */
export async function runPoll(
  run: {
    readonly target: Target;
    readonly intervalSeconds: number;
    readonly poll: (options: ReadOptions, lookupsSent?: () => void) => Promise<PollResult>;
    readonly signal: AbortSignal;
  },
  context: PollRunContext,
  admission: PollAdmission | undefined,
): Promise<boolean> {
  const { target, intervalSeconds, poll, signal } = run;
  const started = performance.now();
  // Retries may use the poll's interval and no more, so a poll never runs into the next one.
  const deadlineMs = Date.now() + intervalSeconds * 1000;
  // Still running when the next poll is due: said at once, not when (or if) the poll ends.
  const overrun = setTimeout(() => {
    reportOverrun(target, intervalSeconds, context);
  }, intervalSeconds * 1000);
  let leave: (() => void) | undefined;
  try {
    leave = await admission?.enter(signal);
    const { snapshot, queueFlow, testingAttempts, partReads, unread } = await poll(
      { signal, deadlineMs },
      leave,
    );
    const durationSeconds = (performance.now() - started) / 1000;
    // Read and written in one go: a webhook event may have moved the ledger since the poll began.
    const flow = queueFlow?.(context.store.queueFlow(target));
    if (unread !== undefined) {
      context.store.recordFailure(
        target,
        unread.message,
        durationSeconds,
        snapshot,
        partReads,
        flow,
        testingAttempts,
      );
      logFailure(
        `poll read part of ${target.repo}: ${unread.message}`,
        unread.error,
        target,
        context,
      );
      return true;
    }
    context.store.recordSuccess(
      target,
      snapshot,
      durationSeconds,
      flow,
      testingAttempts,
      partReads,
    );
    return true;
  } catch (error) {
    if (signal.aborted) return false;
    const message = error instanceof Error ? error.message : String(error);
    context.store.recordFailure(target, message, (performance.now() - started) / 1000);
    logFailure(`poll failed: ${message}`, error, target, context);
    return false;
  } finally {
    leave?.();
    clearTimeout(overrun);
  }
}

/**
 * One line per failed (or partly failed) poll, so at most one per interval and target, with what
 * to check; an auth failure is an error because nothing recovers until someone fixes the token.
 */
function logFailure(
  message: string,
  error: unknown,
  target: Target,
  context: PollRunContext,
): void {
  const hint = whatToCheck(error, target);
  const level = isAuthenticationFailure(error) ? 'error' : 'warn';
  context.logger[level](
    {
      kind: target.kind,
      repo: target.repo,
      branch: target.branch || undefined,
      ...errorContext(error),
      ...(hint === undefined ? {} : { check: hint }),
    },
    `${message}${hint === undefined ? '' : `; ${hint}`}`,
  );
}

/**
 * A poll still running after its interval: its target's data is late, and the next poll starts
 * only when this one ends. Every one is counted and shows its target down; the log keeps a few.
 */
function reportOverrun(target: Target, intervalSeconds: number, context: PollRunContext): void {
  const message = `poll still running after its interval of ${intervalSeconds}s; data is late`;
  context.pollObserver?.pollOverran(target.kind);
  context.store.recordOverrun(target, message);
  context.lateLog.late(target, intervalSeconds);
}

/** What an operator needs to find a failed call in Trunk's logs (never the token). */
function errorContext(error: unknown): Record<string, unknown> {
  if (!(error instanceof TrunkApiError)) return {};
  const { endpoint, status, code, requestId, reason, attempts } = error;
  return { endpoint, status, code, requestId, reason, attempts };
}

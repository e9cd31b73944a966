// A queue keeps each counted exit for hours after its pull request left
// (COUNTED_EXIT_RETENTION_SECONDS), thousands of them in a busy organization: a counted stay is kept
// packed (PackedCountedStay), and unpacked when a witness or the clock steps it.
import { EXIT_OUTCOMES, type ExitOutcome } from '../snapshot/exitOutcome.js';
import {
  EXIT_SOURCES,
  type CountedExit,
  type ExitSource,
  type PackedCountedStay,
  type PrStay,
  type StoredStay,
} from '../snapshot/prStayTypes.js';

function packedTime(at: number | undefined): number {
  return at ?? Number.NaN;
}

function unpackedTime(at: number | undefined): number | undefined {
  return at === undefined || Number.isNaN(at) ? undefined : at;
}

/** `stay` as a queue keeps it. */
export function packStay(stay: PrStay): StoredStay {
  if (stay.phase !== 'counted') return stay;
  const { exit } = stay;
  const code =
    EXIT_SOURCES.indexOf(exit.witness) * EXIT_OUTCOMES.length + EXIT_OUTCOMES.indexOf(exit.outcome);
  return [code, exit.leftAt, exit.countedAt, packedTime(exit.goneBy), packedTime(exit.restartedAt)];
}

function isPacked(stored: StoredStay): stored is PackedCountedStay {
  return Array.isArray(stored);
}

/** The stay a queue keeps as `stored`. */
export function unpackStay(stored: StoredStay | undefined): PrStay | undefined {
  if (stored === undefined || !isPacked(stored)) return stored;
  const [code = 0, leftAt = 0, countedAt = 0, goneBy, restartedAt] = stored;
  const exit: CountedExit = {
    witness: EXIT_SOURCES[Math.floor(code / EXIT_OUTCOMES.length)] as ExitSource,
    outcome: EXIT_OUTCOMES[code % EXIT_OUTCOMES.length] as ExitOutcome,
    leftAt,
    countedAt,
    goneBy: unpackedTime(goneBy),
    restartedAt: unpackedTime(restartedAt),
  };
  return { phase: 'counted', exit };
}

// The reads of one poll, each run as its declaration says its failure is taken, and what the
// target's status records of the parts they fill: when each was last read whole, and why its
// latest read failed.
import type { PartRead, PartReads, SnapshotPart, TargetStatus } from '../snapshot/types.js';
import type { ReadDeclaration, ReadFailure } from './readDeclaration.js';

/** A read whose failure is not its part's: it fails the poll, or the read takes it itself. */
type WholeRead = ReadDeclaration & {
  readonly failure: Extract<ReadFailure, { readonly effect: 'poll fails' | 'taken by the read' }>;
};

/** What one run of a read gives: its value, and how far that value is the part read now. */
export interface ReadAnswer<T> {
  readonly value: T;
  /** When the value was read, when that was before this run (a shared read's last good answer). */
  readonly readAt?: number | undefined;
  /** Why this run could not read the part now: `value` is then what the part held before. */
  readonly failure?: Error | undefined;
  /** No call was due: the part is as complete as it was before this run. */
  readonly skipped?: boolean;
}

/** Part of a target that a poll could not read: the target is down, and says why. */
export interface UnreadParts {
  readonly message: string;
  readonly error: unknown;
}

/**
 * One poll's reads of a target whose status was `previous` before it. Each read runs through
 * run(), which takes its failure as its declaration says; recorded() is what the poll records.
 */
export class PollReads {
  readonly #parts: Partial<Record<SnapshotPart, PartRead>> = {};
  readonly #unread: UnreadParts[] = [];

  constructor(
    private readonly previous: TargetStatus | undefined,
    private readonly now: () => number,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /**
   * Runs `read`, made as `declaration` says. A read whose failure fails the poll, or that takes
   * its failures itself, rejects as it does; a read of a part records the part's read (and, for a
   * `part down` failure, why the target is down) and resolves with its value, or undefined when
   * it failed without one. Rejects whenever the poll is being aborted.
   */
  async run<T>(declaration: WholeRead, read: () => Promise<ReadAnswer<T>>): Promise<T>;
  async run<T>(
    declaration: ReadDeclaration,
    read: () => Promise<ReadAnswer<T>>,
  ): Promise<T | undefined>;
  async run<T>(
    declaration: ReadDeclaration,
    read: () => Promise<ReadAnswer<T>>,
  ): Promise<T | undefined> {
    const { effect } = declaration.failure;
    if (effect === 'poll fails' || effect === 'taken by the read') return (await read()).value;
    let answer: ReadAnswer<T> | undefined;
    let failure: unknown;
    try {
      answer = await read();
      failure = answer.failure;
    } catch (error) {
      if (this.signal?.aborted === true) throw error;
      failure = error;
    }
    this.#record(declaration, answer, failure);
    return answer?.value;
  }

  /** What a poll's result records of its reads: each part's read, and the parts it could not read. */
  recorded(): { readonly partReads: PartReads; readonly unread?: UnreadParts } {
    const unread = this.unread();
    const partReads = { ...this.previous?.partReads, ...this.#parts };
    return { partReads, ...(unread === undefined ? {} : { unread }) };
  }

  /** The parts it could not read (their reads' failures take the target down); none: undefined. */
  unread(): UnreadParts | undefined {
    const [first] = this.#unread;
    if (first === undefined) return undefined;
    return { message: this.#unread.map(({ message }) => message).join('; '), error: first.error };
  }

  #record(declaration: ReadDeclaration, answer: ReadAnswer<unknown> | undefined, failure: unknown) {
    const { part } = declaration;
    const before = this.previous?.partReads?.[part];
    if (failure === undefined && answer?.skipped === true && before?.failure !== undefined) {
      // A run that made no call leaves a failed read failed, its target down as it was.
      this.#parts[part] = before;
      this.#takeDown(declaration, before.failure, new Error(before.failure), true);
      return;
    }
    if (failure === undefined) {
      this.#parts[part] = { readAt: answer?.readAt ?? this.now() };
      return;
    }
    const message = messageOf(failure);
    this.#parts[part] = {
      readAt: answer?.readAt ?? before?.readAt ?? this.previous?.lastSuccessAt,
      failure: message,
    };
    this.#takeDown(declaration, message, failure, answer !== undefined);
  }

  /** Says why the target is down, for a read whose failure does that (`part down`). */
  #takeDown(declaration: ReadDeclaration, message: string, error: unknown, kept: boolean): void {
    if (declaration.failure.effect !== 'part down') return;
    const stays = kept ? ' (their last list read stays until polling.staleAfterSeconds)' : '';
    this.#unread.push({ message: `${declaration.name}: ${message}${stays}`, error });
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

import type { SnapshotStore } from '../snapshot/store.js';
import type { TargetStatus } from '../snapshot/types.js';

/** Where the snapshot metrics read target statuses: the store itself, or a render's pinned view of it. */
export interface StatusSource {
  statuses(): readonly TargetStatus[];
}

/**
 * What the snapshot metrics read, as the /metrics renderer sets it. Outside a render both sources
 * read the store. During one, every metric reads the statuses the render pinned when it started
 * (so polls landing while it runs cannot mix two versions of a target into one page), and the
 * per-target metrics read only the target whose series are being rendered: each target's series
 * are then rendered, and cached, on their own.
 */
export class SnapshotView {
  readonly #store: SnapshotStore;
  #pinned: readonly TargetStatus[] | undefined;
  #scope: readonly TargetStatus[] | undefined;
  /** Renders run one at a time: they share the pin and the scope. */
  #lock: Promise<unknown> = Promise.resolve();

  /** Metrics whose series each belong to one target (their labels name it) read this. */
  readonly perTarget: StatusSource = {
    statuses: () => this.#scope ?? this.#pinned ?? this.#store.statuses(),
  };

  /** Metrics computed across targets (the slowest poll of a kind) read this. */
  readonly allTargets: StatusSource = {
    statuses: () => this.#pinned ?? this.#store.statuses(),
  };

  constructor(store: SnapshotStore) {
    this.#store = store;
  }

  /**
   * Runs `render` with `statuses` pinned, after any render already running. `render` narrows the
   * per-target metrics with `scope`: one target, none (to read a family's HELP and TYPE), or, with
   * undefined, every pinned target.
   */
  async pinned<T>(
    statuses: readonly TargetStatus[],
    render: (scope: (targets: readonly TargetStatus[] | undefined) => void) => Promise<T>,
  ): Promise<T> {
    const run = this.#lock.then(async () => {
      this.#pinned = statuses;
      try {
        return await render((targets) => {
          this.#scope = targets;
        });
      } finally {
        this.#pinned = undefined;
        this.#scope = undefined;
      }
    });
    // Not run.catch(): that would hold on to the last render's result (a whole page) until the next.
    this.#lock = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }
}

/** The metrics computed from the store alone, as the /metrics renderer needs to know them. */
export interface SnapshotMetrics {
  /** Every one of them: their values may be cached until the store changes. */
  readonly names: ReadonlySet<string>;
  /** Those whose series each belong to one target; rendered, and cached, per target. */
  readonly perTarget: ReadonlySet<string>;
  /** What they read. */
  readonly view: SnapshotView;
}

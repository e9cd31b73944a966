import type { QueueFlow } from './queueFlowTypes.js';
import { partReadTimes, shownStatus, turnsStale } from './staleParts.js';
import type { TestingAttempts } from './testingAttemptTypes.js';
import type { PartReads, Snapshot, Target, TargetStatus } from './types.js';
import { targetKey } from './types.js';
import type { WebhookCounts } from './webhookCounts.js';

/** Told of each target whose status a write replaced: its key, and its status (undefined once removed). */
export type TargetChangeListener = (key: string, status: TargetStatus | undefined) => void;

/**
 * Latest poll outcome per target. Writers (the poller) replace whole entries; readers (metrics,
 * landing page, readiness) get frozen values, so a scrape never sees a half-written poll. Every
 * write is pushed to the subscribers, so a renderer can render a target's series when it changes
 * rather than when it is scraped.
 */
/** Updates kept for a queue's ledger before its first poll starts it, at most. */
const MAX_UPDATES_BEFORE_LEDGER = 1000;

export class SnapshotStore {
  private readonly entries = new Map<string, TargetStatus>();
  /**
   * The status with its stale snapshot parts hidden, by how many are, one per stored status, so
   * that statuses() gives the same object for an unchanged target on every call: renderers cache
   * each target's series by it. For one status, parts only turn stale, in the order they were
   * read, so their number says which.
   */
  private readonly hiddenViews = new WeakMap<
    TargetStatus,
    { readonly hiddenParts: number; readonly view: TargetStatus }
  >();
  /**
   * The statuses of targets that left the set, by key, with when they left: one that comes back
   * within staleAfterSeconds (a reload removing and re-adding it, a discovery read missing it
   * once) takes its status back, so its counters go on rather than restart at 0, and its next poll
   * counts what happened while it was away.
   */
  private readonly departed = new Map<
    string,
    { readonly status: TargetStatus; readonly removedAt: number }
  >();
  /**
   * Updates of a queue's ledger that came before its first poll started it, by key: applied to the
   * ledger that poll records (at most MAX_UPDATES_BEFORE_LEDGER a queue, the newest kept).
   */
  private readonly beforeLedger = new Map<string, ((flow: QueueFlow) => QueueFlow)[]>();
  private changeCount = 0;
  private readonly listeners = new Set<TargetChangeListener>();
  #awaitingDiscovery = false;
  /** viewKey()'s last answer, and the read time of the part that will change it first. */
  private view:
    { changeCount: number; key: string; nextToTurnStale: number | undefined } | undefined;

  constructor(
    private staleAfterSeconds: number,
    private readonly now: () => number = () => Date.now() / 1000,
  ) {}

  /** Increases on every change; lets renderers cache output until something moved. */
  get version(): number {
    return this.changeCount;
  }

  /**
   * Calls `listener` after every write with the target it replaced, as statuses() now shows it.
   * A snapshot that turns stale with time alone is not pushed: statuses() shows it hidden.
   * Returns the unsubscribe function.
   */
  subscribe(listener: TargetChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Until discovery has tried to read the organization's lists once, the targets are not all
   * known yet, so not all polled (readiness waits for it, whatever the read's outcome).
   */
  awaitDiscovery(awaiting: boolean): void {
    this.#awaitingDiscovery = awaiting;
  }

  /** Whether readiness waits for discovery's first read. */
  get awaitingDiscovery(): boolean {
    return this.#awaitingDiscovery;
  }

  /**
   * Makes the configured targets the only ones known: removed ones vanish, new ones start unpolled,
   * but for one removed less than staleAfterSeconds ago, which takes back its status.
   */
  setTargets(targets: readonly Target[], staleAfterSeconds = this.staleAfterSeconds): void {
    this.staleAfterSeconds = staleAfterSeconds;
    const now = this.now();
    this.forgetDeparted(now);
    const wanted = new Map(targets.map((target) => [targetKey(target), target]));
    for (const [key, status] of this.entries) {
      if (wanted.has(key)) continue;
      this.beforeLedger.delete(key);
      if (status.lastAttemptAt !== undefined) this.departed.set(key, { status, removedAt: now });
      this.set(key, undefined);
    }
    for (const [key, target] of wanted) {
      if (this.entries.has(key)) continue;
      const back = this.departed.get(key);
      this.departed.delete(key);
      this.set(
        key,
        back === undefined ? freshStatus(target) : Object.freeze({ ...back.status, target }),
      );
    }
    this.changeCount++;
  }

  /**
   * Drops the departed statuses past their retention, oldest first: they were added in the order
   * they left, so the first one kept ends the walk, and a poll's write pays for what it drops only.
   */
  private forgetDeparted(now: number): void {
    for (const [key, { removedAt }] of this.departed) {
      if (now - removedAt <= this.staleAfterSeconds) return;
      this.departed.delete(key);
    }
  }

  /**
   * Records a successful poll, its snapshot and (merge queues) its flow and, through API v2, its
   * testing attempts, with what it recorded of the reads of each part (`partReads`). Ignored for
   * targets no longer configured.
   */
  recordSuccess(
    target: Target,
    snapshot: Snapshot,
    durationSeconds: number,
    queueFlow?: QueueFlow,
    testingAttempts?: TestingAttempts,
    partReads?: PartReads,
  ): void {
    const key = targetKey(target);
    if (!this.entries.has(key)) return;
    const at = this.now();
    // Every poll writes here: a reload that removed targets and no later change of the targets
    // would otherwise keep their statuses until the next one.
    this.forgetDeparted(at);
    this.set(
      key,
      Object.freeze({
        target,
        up: true,
        lastAttemptAt: at,
        lastSuccessAt: at,
        lastDurationSeconds: durationSeconds,
        lastError: undefined,
        snapshot: deepFreeze(snapshot),
        queueFlow: this.withUpdatesBeforeLedger(key, queueFlow),
        webhookCounts: this.entries.get(key)?.webhookCounts,
        ...(testingAttempts === undefined
          ? {}
          : { testingAttempts: Object.freeze(testingAttempts) }),
        ...(partReads === undefined ? {} : { partReads: deepFreeze(partReads) }),
      }),
    );
    this.changeCount++;
  }

  /**
   * Replaces a target's webhook counts with `update(previous)`; false (and nothing called) for a
   * target that is not configured.
   */
  updateWebhookCounts(
    target: Target,
    update: (previous: WebhookCounts | undefined) => WebhookCounts,
  ): boolean {
    const key = targetKey(target);
    const previous = this.entries.get(key);
    if (!previous) return false;
    const webhookCounts = deepFreeze(update(previous.webhookCounts));
    this.set(key, Object.freeze({ ...previous, webhookCounts }));
    this.changeCount++;
    return true;
  }

  /** The target's webhook counts, if any event for it was accepted. */
  webhookCounts(target: Target): WebhookCounts | undefined {
    return this.entries.get(targetKey(target))?.webhookCounts;
  }

  /**
   * Records a failed poll; the previous snapshot is kept until it goes stale. A poll that read part
   * of its target (one of its lists failed) gives the `snapshot` it made of the rest and what it
   * recorded of each part's read (`partReads`: each part as old as its `readAt` says), with the
   * ledger and testing attempts the parts it read moved: the target is down all the same until a
   * poll reads every part, and the last successful poll stays the last that did.
   */
  recordFailure(
    target: Target,
    error: string,
    durationSeconds: number,
    snapshot?: Snapshot,
    partReads?: PartReads,
    queueFlow?: QueueFlow,
    testingAttempts?: TestingAttempts,
  ): void {
    const key = targetKey(target);
    const previous = this.entries.get(key);
    if (!previous) return;
    this.set(
      key,
      Object.freeze({
        ...previous,
        up: false,
        lastAttemptAt: this.now(),
        lastDurationSeconds: durationSeconds,
        lastError: error,
        ...(snapshot === undefined ? {} : { snapshot: deepFreeze(snapshot) }),
        ...(partReads === undefined ? {} : { partReads: deepFreeze(partReads) }),
        ...(queueFlow === undefined
          ? {}
          : { queueFlow: this.withUpdatesBeforeLedger(key, queueFlow) }),
        ...(testingAttempts === undefined
          ? {}
          : { testingAttempts: Object.freeze(testingAttempts) }),
      }),
    );
    this.changeCount++;
  }

  /**
   * Records that a poll has outrun its interval: the target counts as down (its data is late) until
   * a poll finishes, and its snapshot goes stale on the usual clock. A first poll that runs late
   * makes the target down too, so an alert on target_up 0 sees a target that never reports.
   */
  recordOverrun(target: Target, error: string): void {
    const key = targetKey(target);
    const previous = this.entries.get(key);
    if (previous === undefined) return;
    this.set(key, Object.freeze({ ...previous, up: false, lastError: error }));
    this.changeCount++;
  }

  /**
   * Replaces a queue's flow ledger with `update` of it (a webhook event counted between polls).
   * Nothing happens before its first successful poll, which starts the ledger, or for a target no
   * longer configured. Read and write are one step, so no concurrent poll's result is lost.
   */
  updateQueueFlow(target: Target, update: (flow: QueueFlow) => QueueFlow): boolean {
    const key = targetKey(target);
    const previous = this.entries.get(key);
    if (previous?.queueFlow === undefined) return false;
    const queueFlow = update(previous.queueFlow);
    if (queueFlow === previous.queueFlow) return false;
    this.set(key, Object.freeze({ ...previous, queueFlow: Object.freeze(queueFlow) }));
    this.changeCount++;
    return true;
  }

  /**
   * As updateQueueFlow, but before the queue's first successful poll `update` waits for the ledger
   * that poll starts, rather than being dropped; for a target not configured, nothing happens.
   */
  updateQueueFlowOnceStarted(target: Target, update: (flow: QueueFlow) => QueueFlow): void {
    const key = targetKey(target);
    const previous = this.entries.get(key);
    if (previous === undefined) return;
    if (previous.queueFlow !== undefined) {
      this.updateQueueFlow(target, update);
      return;
    }
    const waiting = [...(this.beforeLedger.get(key) ?? []), update];
    this.beforeLedger.set(key, waiting.slice(-MAX_UPDATES_BEFORE_LEDGER));
  }

  /** `queueFlow` as the target's ledger, with the updates that waited for it when it starts it. */
  private withUpdatesBeforeLedger(key: string, queueFlow: QueueFlow | undefined) {
    if (queueFlow === undefined) return undefined;
    const waiting = this.beforeLedger.get(key);
    this.beforeLedger.delete(key);
    const started =
      waiting === undefined || this.entries.get(key)?.queueFlow !== undefined
        ? queueFlow
        : waiting.reduce((flow, update) => update(flow), queueFlow);
    return Object.freeze(started);
  }

  /** The target's status as its polls last wrote it, nothing hidden; undefined for one not configured. */
  latest(target: Target): TargetStatus | undefined {
    return this.entries.get(targetKey(target));
  }

  /** The target's last good snapshot (stale or not); undefined before its first success. */
  lastSnapshot(target: Target): Snapshot | undefined {
    return this.entries.get(targetKey(target))?.snapshot;
  }

  /** The flow ledger as of the target's last successful poll, stale or not (the poller diffs against it). */
  queueFlow(target: Target): QueueFlow | undefined {
    return this.entries.get(targetKey(target))?.queueFlow;
  }

  /** The queue's testing attempts as of its last successful poll through API v2. */
  testingAttempts(target: Target): TestingAttempts | undefined {
    return this.entries.get(targetKey(target))?.testingAttempts;
  }

  /** Every configured target in configuration order, with data older than the stale limit hidden. */
  statuses(): TargetStatus[] {
    const now = this.now();
    // A pure read (the memo of hidden views aside): the scrape path calls it and must not change
    // the store.
    // Hiding is as good as dropping, since lastSuccessAt only moves on a success, which replaces
    // the snapshot anyway.
    return [...this.entries.values()].map((status) => this.shown(status, now));
  }

  /** A status as readers see it: with each of its parts hidden once stale. */
  private shown(status: TargetStatus, now: number): TargetStatus {
    const hiddenParts = stalePartCount(status, now, this.staleAfterSeconds);
    if (hiddenParts === 0) return status;
    const memo = this.hiddenViews.get(status);
    if (memo?.hiddenParts === hiddenParts) return memo.view;
    const view = Object.freeze(shownStatus(status, now, this.staleAfterSeconds));
    this.hiddenViews.set(status, { hiddenParts, view });
    return view;
  }

  /** Replaces (or, with undefined, removes) a target's status and tells the subscribers. */
  private set(key: string, status: TargetStatus | undefined): void {
    if (status === undefined) this.entries.delete(key);
    else this.entries.set(key, status);
    const shown = status === undefined ? undefined : this.shown(status, this.now());
    for (const listener of this.listeners) listener(key, shown);
  }

  /**
   * Changes whenever what statuses() returns changes: on every write, and when a snapshot turns
   * stale (which happens with time, not with a write). A scrape of an unchanged store checks it
   * instead of every target.
   */
  viewKey(): string {
    const now = this.now();
    const view = this.view;
    // Until a write, the key can only change when the oldest not-yet-stale candidate turns stale.
    if (
      view?.changeCount === this.changeCount &&
      (view.nextToTurnStale === undefined ||
        !turnsStale(view.nextToTurnStale, now, this.staleAfterSeconds))
    ) {
      return view.key;
    }
    let hidden = 0;
    let nextToTurnStale: number | undefined;
    for (const status of this.entries.values()) {
      for (const readAt of partReadTimes(status)) {
        if (turnsStale(readAt, now, this.staleAfterSeconds)) hidden++;
        else nextToTurnStale = Math.min(nextToTurnStale ?? Infinity, readAt);
      }
    }
    // For one version, staleness only grows with time, so the count identifies the hidden set.
    const key = `${this.changeCount}:${hidden}`;
    this.view = { changeCount: this.changeCount, key, nextToTurnStale };
    return key;
  }

  /**
   * True once discovery (when on) has tried one read and every known target has finished at least
   * one poll, successfully or not.
   */
  allPolledOnce(): boolean {
    if (this.#awaitingDiscovery) return false;
    for (const status of this.entries.values()) {
      if (!finishedAPoll(status)) return false;
    }
    return true;
  }
}

/**
 * Whether a poll of the target has ended, successfully or not: a first poll that runs late makes
 * the target down before any has.
 */
export function finishedAPoll(status: TargetStatus): boolean {
  return status.lastAttemptAt !== undefined;
}

/** How many failing parts of a target's status are stale at `now`. */
function stalePartCount(status: TargetStatus, now: number, staleAfterSeconds: number): number {
  return partReadTimes(status).filter((readAt) => turnsStale(readAt, now, staleAfterSeconds))
    .length;
}

function freshStatus(target: Target): TargetStatus {
  return Object.freeze({
    target,
    up: undefined,
    lastAttemptAt: undefined,
    lastSuccessAt: undefined,
    lastDurationSeconds: undefined,
    lastError: undefined,
    snapshot: undefined,
    queueFlow: undefined,
    webhookCounts: undefined,
  });
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

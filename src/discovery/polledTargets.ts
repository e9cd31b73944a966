import type { OrganizationLists } from '../budget/apiBudget.js';
import { credentialsOf, targetApis } from '../config/targetApis.js';
import { configuredTargets } from '../config/targets.js';
import type { ExporterConfig, RepositoryTarget } from '../config/types.js';
import { applyMergeQueueEvent, eventBeforeLedger } from '../flow/queueEvents.js';
import type { Logger } from '../log/logger.js';
import { LateLog } from '../poller/lateLog.js';
import { LookupMemories } from '../poller/v1/lookupMemories.js';
import { clientSettingsChanged, diffTargets, type ConfigChanges } from '../reload/configChanges.js';
import type { PollObserver } from '../poller/pollObserver.js';
import { PollScheduler } from '../poller/scheduler.js';
import type { SharedReadTiming } from '../poller/sharedRead.js';
import { buildPollJobs } from '../poller/jobs/targetJobs.js';
import { logOrganizationReadFailure } from '../poller/failureHint.js';
import { lookupsAtATime } from '../poller/lookupFanOut.js';
import {
  QueueEntryHistoryReads,
  historyReadFailed,
  historySetAside,
} from '../poller/v2/v2QueueEntryHistoryRead.js';
import { V2TestDirectory } from '../poller/v2/v2TestDirectory.js';
import { V2QueueDirectory, queueListPageBound } from '../poller/v2/v2QueueDirectory.js';
import type { SnapshotStore } from '../snapshot/store.js';
import { targetKey, type Target } from '../snapshot/types.js';
import type { TrunkClient } from '../trunk/client.js';
import type { CallSpacing } from '../trunk/callSpacing.js';
import { TrunkV2Client, entryHistorySpacing } from '../trunk/v2Client.js';
import { TestListPaths } from '../trunk/v2TestList.js';
import type { FlakyTestEvent, MergeQueueEvent } from '../trunk/webhookEvents.js';
import { TriggeredPolls, type TriggerSpacing } from '../webhooks/pollTriggers.js';
import { withDiscovered } from './discoveredTargets.js';
import type { DiscoveryObserver } from './observer.js';
import { TargetDiscovery } from './targetDiscovery.js';

interface PolledTargetsOptions {
  readonly store: SnapshotStore;
  /** The client new polls use; a reload may replace it. */
  readonly clients: { readonly current: TrunkClient };
  readonly pollObserver: PollObserver;
  readonly discoveryObserver: DiscoveryObserver;
  readonly logger: Logger;
  /** How webhook events turn into polls; tests shorten it. */
  readonly triggerSpacing?: TriggerSpacing | undefined;
  /** The most seconds a target's first poll waits (PollScheduler's default); tests shorten it. */
  readonly firstPollSpreadSeconds?: number | undefined;
}

/** What the trigger of the organization's test-list reads is keyed by: their spacing is a quarantine list's. */
const ORGANIZATION_TESTS: Target = { kind: 'flaky_tests', repo: '(organization)', branch: '' };

/**
 * Told the polled targets, the configuration they came from (with the discovered repositories
 * among its targets, as the polls have it) and what the organization's lists last named, whenever
 * the targets or the configuration change.
 */
type TargetsListener = (
  targets: readonly Target[],
  config: ExporterConfig,
  organization: OrganizationLists,
) => void;

/**
 * The targets this instance polls, configured and discovered, with their schedule: follows the
 * configuration (`apply`), discovery and webhook events. A target kept across a change keeps its
 * data, its schedule and what its polls remember (lookups, the organization's v2 lists).
 */
export class PolledTargets {
  readonly #options: PolledTargetsOptions;
  readonly #scheduler: PollScheduler;
  readonly #lookupMemories = new LookupMemories();
  /** Kept across changes of the targets, so a reload or a discovery read does not reopen its window. */
  readonly #lateLog: LateLog;
  readonly #v2Queues: V2QueueDirectory;
  readonly #v2Tests: V2TestDirectory;
  readonly #v2History: QueueEntryHistoryReads;
  /** Which path the organization's test list answers at, learned once for every client. */
  readonly #testListPaths = new TestListPaths();
  readonly #triggeredPolls: TriggeredPolls;
  /** Event-triggered reads of the organization's test lists, spaced as a quarantine list's polls. */
  readonly #testListRefreshes: TriggeredPolls;
  /** The flaky-tests targets the organization's test lists serve (with a key: all), by targetKey. */
  #v2FlakyTargets = new Map<string, Target>();
  readonly #discovery: TargetDiscovery;
  readonly #listeners: TargetsListener[] = [];
  /** What the last successful discovery found; merged with the configured targets. */
  #discovered: readonly RepositoryTarget[] = [];
  /** The targets polled now (#setTargets). */
  #targets: readonly Target[] = [];
  /** Whether a discovery read has ended, whatever its outcome: readiness waits for one. */
  #discoveryTried = false;
  #config: ExporterConfig;
  /** One for every v2 client made: Trunk's limit per key holds across reloads. */
  #historySpacing: CallSpacing;

  constructor(options: PolledTargetsOptions, initial: ExporterConfig) {
    this.#options = options;
    this.#config = initial;
    const { clients, logger } = options;
    this.#lateLog = new LateLog(logger);
    this.#scheduler = new PollScheduler({
      logger,
      ...(options.firstPollSpreadSeconds === undefined
        ? {}
        : { firstPollSpreadSeconds: options.firstPollSpreadSeconds }),
    });
    // One list of the organization's queues per merge-queue interval, whatever the reloads.
    this.#historySpacing = entryHistorySpacing(initial.sharding.totalShards);
    const v2Reader = new TrunkV2Client(clients.current, this.#testListPaths, this.#historySpacing);
    this.#v2Queues = new V2QueueDirectory(
      v2Reader,
      initial.polling.mergeQueueIntervalSeconds,
      undefined,
      {
        staleAfterSeconds: initial.polling.staleAfterSeconds,
        bound: queueListBound(initial),
        // The one line per failed read: discovery and the queue polls share this read.
        onFailure: (error) => {
          logOrganizationReadFailure(
            logger,
            `the organization's list of merge queues could not be read (${error.message}); queue polls and discovery go on with the last list read until it is older than polling.staleAfterSeconds`,
            error,
          );
        },
        onLeftOut: (count, first) => {
          logger.warn(
            { queues: count, firstQueueId: first },
            `${String(count)} merge queue(s) of the organization's list are left out: their repository URL is not host/owner/name or their target branch is empty or longer than 1,000 characters (the first: queue id ${first})`,
          );
        },
      },
    );
    this.#v2Tests = new V2TestDirectory(testDirectorySettings(initial, v2Reader, logger));
    this.#v2History = new QueueEntryHistoryReads(
      v2Reader,
      queueListTiming(initial),
      undefined,
      historyReadFailed(logger),
      historySetAside(logger),
    );
    // Event-triggered polls run as the target's own scheduled job: the same client limits,
    // fairness and deadline as every other poll, and never two polls of one target at once.
    this.#triggeredPolls = new TriggeredPolls((target) => {
      this.#scheduler.runNow(targetKey(target));
    }, options.triggerSpacing);
    // One read of the lists refreshes every target they serve: all are polled again at once.
    this.#testListRefreshes = new TriggeredPolls(() => {
      this.#v2Tests.expire();
      for (const key of this.#v2FlakyTargets.keys()) this.#scheduler.runNow(key);
    }, options.triggerSpacing);
    this.#discovery = new TargetDiscovery({
      listQueues: async (readOptions) => {
        await this.#v2Queues.refresh(readOptions);
        return this.#v2Queues.latest();
      },
      listTestRepositories: (readOptions) => this.#v2Tests.repositoriesWithTests(readOptions),
      onDiscovered: (repositories) => {
        this.#discovered = repositories;
        const before = this.#targets;
        this.#setTargets();
        logDiscoveredChanges(logger, diffTargets(before, this.#targets));
      },
      onTried: () => {
        this.#discoveryTried = true;
        options.store.awaitDiscovery(false);
      },
      observer: options.discoveryObserver,
      logger,
    });
  }

  /** The targets polled now: configured and discovered, this shard's. */
  targets(): readonly Target[] {
    return this.#targets;
  }

  /** Adds a listener, told from the next change on. */
  onTargets(listener: TargetsListener): void {
    this.#listeners.push(listener);
  }

  /**
   * The apply step of a reload: the configured targets, the polling settings and discovery. New
   * Trunk settings (URL, key, token, their files) read discovery and the organization's lists again
   * at once, since what the old ones read, or failed to, may not hold for them.
   */
  readonly apply = (next: ExporterConfig, previous: ExporterConfig): void => {
    this.#config = next;
    this.#setTargets();
    this.#options.store.awaitDiscovery(next.discovery?.enabled === true && !this.#discoveryTried);
    this.#discovery.configure(next.discovery);
    if (next !== previous && clientSettingsChanged(previous, next)) {
      this.#v2Queues.invalidate();
      this.#v2Tests.clientChanged();
      this.#discovery.readNow();
    }
    // Another metrics period (or none): the flaky and broken tests are read again with it now,
    // so that no cost shows a window no longer asked for.
    if (next.reads.testMetricsPeriod !== previous.reads.testMetricsPeriod) {
      this.#v2Tests.expire('unhealthy');
      for (const key of this.#v2FlakyTargets.keys()) this.#scheduler.runNow(key);
    }
  };

  /**
   * An accepted webhook event about a merge queue (its webhook counts already took it): what else
   * the event means for the queue starts here. Never blocks the answer to Trunk.
   */
  mergeQueueEvent(target: Target, event: MergeQueueEvent, receivedAt: number): void {
    const { mergeQueueIntervalSeconds: intervalSeconds } = this.#config.polling;
    // An exit counts at once, and once: the poll that sees the PR gone will not count it again.
    const { store } = this.#options;
    if (store.queueFlow(target) === undefined) {
      // Before the queue's first poll: that poll sees the exit, but only the event knows it failed
      // now, which the history, once read, must not count again.
      const update = eventBeforeLedger(event, receivedAt);
      if (update !== undefined) store.updateQueueFlowOnceStarted(target, update);
    } else {
      store.updateQueueFlow(target, (flow) =>
        applyMergeQueueEvent(flow, event, receivedAt, { intervalSeconds }),
      );
    }
    this.#triggeredPolls.request(target);
  }

  /**
   * An accepted webhook event about a repository's flaky tests. With a key (the organization's test
   * lists serve every quarantine list's target), any such event reads those lists again (at most
   * once per the trigger spacing of a quarantine list, however many events come) and polls every
   * target they serve, walking the v1 lists read beside them too; with a v1 token alone, the
   * repository's list is walked, unless the event is an investigation, which that list does not show.
   */
  flakyTestEvent(target: Target, event: FlakyTestEvent): void {
    if (this.#v2FlakyTargets.has(targetKey(target))) {
      this.#testListRefreshes.request(ORGANIZATION_TESTS);
    } else if (event.type !== 'test_case.investigation_completed') {
      this.#triggeredPolls.request(target);
    }
  }

  /** Stops every poll, discovery read and API call in flight. */
  async stop(): Promise<void> {
    this.#triggeredPolls.stop();
    this.#testListRefreshes.stop();
    await Promise.all([this.#discovery.stop(), this.#scheduler.stop()]);
  }

  #setTargets(): void {
    const config = this.#config;
    const { store, clients, logger, pollObserver, discoveryObserver } = this.#options;
    const effective = withDiscovered(config, this.#discovered);
    const targets = configuredTargets(effective);
    this.#targets = targets;
    store.setTargets(targets, config.polling.staleAfterSeconds);
    const organization = {
      queues: this.#v2Queues.latest().length,
      repositoriesWithTests: this.#v2Tests.repositoriesRead(),
    };
    // The polls' configuration, so that what depends on every shard's flaky-tests repositories
    // (which shard reads the test collections) is the same in the budget as in the polls.
    for (const listener of this.#listeners) listener(targets, effective, organization);
    this.#triggeredPolls.keepOnly(targets);
    // The targets whose flaky and broken tests come from the organization's lists (with a key: all).
    const credentials = credentialsOf(config);
    this.#v2FlakyTargets = new Map(
      targets
        .filter(
          (target) =>
            target.kind === 'flaky_tests' &&
            targetApis(credentials, { ...target, kind: 'flaky_tests' }).unhealthy === 'v2',
        )
        .map((target) => [targetKey(target), target]),
    );
    this.#historySpacing = entryHistorySpacing(config.sharding.totalShards, this.#historySpacing);
    const v2Reader = new TrunkV2Client(clients.current, this.#testListPaths, this.#historySpacing);
    this.#v2Queues.configure(v2Reader, queueListTiming(config), queueListBound(config));
    this.#v2Tests.configure(testDirectorySettings(config, v2Reader, this.#options.logger));
    this.#v2History.configure(v2Reader, queueListTiming(config));
    this.#scheduler.setJobs(
      buildPollJobs({
        config: effective,
        reader: clients.current,
        store,
        logger,
        lookupMemories: this.#lookupMemories,
        pollObserver,
        lateLog: this.#lateLog,
        v2: {
          reader: v2Reader,
          directory: this.#v2Queues,
          tests: this.#v2Tests,
          history: this.#v2History,
        },
      }),
    );
    const found = targets.filter((target) => target.discovered === true);
    discoveryObserver.discoveredTargets({
      merge_queue: found.filter((target) => target.kind === 'merge_queue').length,
      flaky_tests: found.filter((target) => target.kind === 'flaky_tests').length,
    });
  }
}

/** How often the organization's list of merge queues is read under `config`, and how long it serves. */
function queueListTiming(config: ExporterConfig): SharedReadTiming {
  return {
    maxAgeSeconds: config.polling.mergeQueueIntervalSeconds,
    staleAfterSeconds: config.polling.staleAfterSeconds,
  };
}

/**
 * The most pages a read of the organization's list of merge queues takes under `config`: with
 * discovery on, what discovery.maxTargets can keep (queueListPageBound); else V2_MAX_PAGES, since
 * a configured queue may be anywhere in the list.
 */
function queueListBound(config: ExporterConfig) {
  return config.discovery?.enabled === true
    ? queueListPageBound(config.discovery.maxTargets)
    : undefined;
}

/** What the organization's test lists are read with under `config`. */
function testDirectorySettings(config: ExporterConfig, lister: TrunkV2Client, logger: Logger) {
  return {
    lister,
    reads: config.reads,
    logger,
    maxAgeSeconds: config.polling.flakyTestsIntervalSeconds,
    staleAfterSeconds: config.polling.staleAfterSeconds,
    lookupsAtATime: lookupsAtATime(config.trunk.maxConcurrentRequests),
  };
}

/** Names listed in a discovery log line at most; the counts are whole. */
const MAX_NAMES_LOGGED = 20;

/** One `info` line when a discovery read changed the targets polled, naming the first of each. */
function logDiscoveredChanges(
  logger: Logger,
  changes: Pick<ConfigChanges, 'targetsAdded' | 'targetsRemoved'>,
): void {
  const { targetsAdded: added, targetsRemoved: removed } = changes;
  if (added.length === 0 && removed.length === 0) return;
  const names = (items: readonly string[]): string =>
    items.length === 0
      ? ''
      : ` (${items.slice(0, MAX_NAMES_LOGGED).join(', ')}${items.length > MAX_NAMES_LOGGED ? ', …' : ''})`;
  logger.info(
    { added: added.length, removed: removed.length },
    `discovery: ${String(added.length)} target${added.length === 1 ? '' : 's'} added${names(added)}, ` +
      `${String(removed.length)} removed${names(removed)}`,
  );
}

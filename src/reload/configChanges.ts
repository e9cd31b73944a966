import type { ExporterConfig } from '../config/types.js';
import { configuredTargets } from '../poller/targetJobs.js';
import type { Target } from '../snapshot/types.js';

/** What a reload changed, by name only: never a setting's value, which may be a secret. */
export interface ConfigChanges {
  /** `repo@branch` for merge queues, `repo (flaky tests)` for quarantine lists. */
  readonly targetsAdded: readonly string[];
  readonly targetsRemoved: readonly string[];
  /** Paths of settings whose value changed, e.g. `trunk.token`, `polling.staleAfterSeconds`. */
  readonly settingsChanged: readonly string[];
  /** Changed settings the running HTTP server cannot take on; they wait for a restart. */
  readonly needRestart: readonly string[];
}

/** The socket the HTTP server was started with; a reload cannot move it. */
export interface ListeningSettings {
  readonly address: string;
  readonly port: number;
  readonly tls: boolean;
}

/** Settings the Trunk client is built from: a change to any of them means a new client. */
const CLIENT_SETTINGS = [
  'trunk.apiUrl',
  'trunk.token',
  'trunk.timeoutSeconds',
  'trunk.maxConcurrentRequests',
  'trunk.maxRequestsPerSecond',
  'trunk.maxResponseBytes',
] as const;

/** Compares two configurations; `listening` is what the HTTP server actually serves on. */
export function diffConfigs(
  previous: ExporterConfig,
  next: ExporterConfig,
  listening: ListeningSettings,
): ConfigChanges {
  const before = new Set(configuredTargets(previous).map(describeTarget));
  const after = new Set(configuredTargets(next).map(describeTarget));
  const previousSettings = comparableSettings(previous);
  const nextSettings = comparableSettings(next);
  const needRestart: string[] = [];
  if (next.server.address !== listening.address) needRestart.push('server.address');
  if (next.server.port !== listening.port) needRestart.push('server.port');
  if ((next.server.tls !== undefined) !== listening.tls) needRestart.push('server.tls');
  return {
    targetsAdded: [...after].filter((target) => !before.has(target)),
    targetsRemoved: [...before].filter((target) => !after.has(target)),
    settingsChanged: Object.keys(nextSettings).filter(
      (path) => nextSettings[path] !== previousSettings[path],
    ),
    needRestart,
  };
}

/** Whether the Trunk client must be rebuilt to follow `next` (a rotated token included). */
export function clientSettingsChanged(previous: ExporterConfig, next: ExporterConfig): boolean {
  const before = comparableSettings(previous);
  const after = comparableSettings(next);
  return CLIENT_SETTINGS.some((path) => before[path] !== after[path]);
}

/** One line for the log and the reload response, e.g. `1 target added (…), 0 removed; …`. */
export function summarizeChanges(changes: ConfigChanges): string {
  const list = (items: readonly string[]): string =>
    items.length === 0 ? '' : ` (${items.join(', ')})`;
  const added = changes.targetsAdded.length;
  const parts = [
    `${added} target${added === 1 ? '' : 's'} added${list(changes.targetsAdded)}, ` +
      `${changes.targetsRemoved.length} removed${list(changes.targetsRemoved)}`,
    changes.settingsChanged.length === 0
      ? 'no settings changed'
      : `settings changed: ${changes.settingsChanged.join(', ')}`,
  ];
  if (changes.needRestart.length > 0) {
    parts.push(`not applied until a restart: ${changes.needRestart.join(', ')}`);
  }
  return parts.join('; ');
}

function describeTarget(target: Target): string {
  return target.kind === 'merge_queue'
    ? `${target.repo}@${target.branch}`
    : `${target.repo} (flaky tests)`;
}

/** Every setting as a comparable string, keyed by its path in the file. */
function comparableSettings(config: ExporterConfig): Record<string, string> {
  const { trunk, server, polling, metrics } = config;
  const tls = server.tls;
  const values: Record<string, unknown> = {
    'trunk.apiUrl': trunk.apiUrl,
    'trunk.token': trunk.token.reveal(),
    'trunk.orgUrlSlug': trunk.orgUrlSlug,
    'trunk.timeoutSeconds': trunk.timeoutSeconds,
    'trunk.maxConcurrentRequests': trunk.maxConcurrentRequests,
    'trunk.maxRequestsPerSecond': trunk.maxRequestsPerSecond,
    'trunk.maxResponseBytes': trunk.maxResponseBytes,
    'server.address': server.address,
    'server.port': server.port,
    'server.enableReload': server.enableReload,
    // The files' contents count: a renewed certificate at the same path is a change.
    'server.tls': tls && [tls.certFile, tls.keyFile, tls.cert, tls.key.reveal()],
    'server.basicAuthUsers': [...server.basicAuthUsers].sort(),
    'polling.mergeQueueIntervalSeconds': polling.mergeQueueIntervalSeconds,
    'polling.flakyTestsIntervalSeconds': polling.flakyTestsIntervalSeconds,
    'polling.pullRequestDetails': polling.pullRequestDetails,
    'polling.staleAfterSeconds': polling.staleAfterSeconds,
    'metrics.topCodeowners': metrics.topCodeowners,
  };
  return Object.fromEntries(
    Object.entries(values).map(([path, value]) => [
      path,
      value === undefined ? '' : JSON.stringify(value),
    ]),
  );
}

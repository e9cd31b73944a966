import { createHash } from 'node:crypto';
import { SETTING_PATHS } from '../config/settingPaths.js';
import { configuredTargets } from '../config/targets.js';
import type { ExporterConfig } from '../config/types.js';
import { Secret } from '../secrets/secret.js';
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

/** Compares two configurations; `listening` is what the HTTP server actually serves on. */
export function diffConfigs(
  previous: ExporterConfig,
  next: ExporterConfig,
  listening: ListeningSettings,
): ConfigChanges {
  const needRestart: string[] = [];
  if (next.server.address !== listening.address) needRestart.push('server.address');
  if (next.server.port !== listening.port) needRestart.push('server.port');
  if ((next.server.tls !== undefined) !== listening.tls) needRestart.push('server.tls');
  return {
    ...diffTargets(configuredTargets(previous), configuredTargets(next)),
    settingsChanged: changedSettings(previous, next),
    needRestart,
  };
}

/** The targets in `after` and not in `before`, and the other way round, by name. */
export function diffTargets(
  before: readonly Target[],
  after: readonly Target[],
): Pick<ConfigChanges, 'targetsAdded' | 'targetsRemoved'> {
  const was = new Set(before.map(describeTarget));
  const is = new Set(after.map(describeTarget));
  return {
    targetsAdded: [...is].filter((target) => !was.has(target)),
    targetsRemoved: [...was].filter((target) => !is.has(target)),
  };
}

/**
 * Whether the Trunk client must be rebuilt to follow `next` (a rotated token included): it is
 * built from the whole `trunk` section, so any change there rebuilds it.
 */
export function clientSettingsChanged(previous: ExporterConfig, next: ExporterConfig): boolean {
  return settingChanged(previous, next, 'trunk');
}

/** Whether the setting at `path` (`server.tls`), or any setting under it, differs in `next`. */
export function settingChanged(
  previous: ExporterConfig,
  next: ExporterConfig,
  path: string,
): boolean {
  return changedSettings(previous, next).some(
    (changed) => changed === path || changed.startsWith(`${path}.`),
  );
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

/** `repo@branch` for a merge queue, `repo (flaky tests)` for a quarantine list. */
export function describeTarget(target: Target): string {
  return target.kind === 'merge_queue'
    ? `${target.repo}@${target.branch}`
    : `${target.repo} (flaky tests)`;
}

/**
 * Paths of the settings whose value differs, named by the file's keys (SETTING_PATHS) in the order
 * the configuration holds them. A section that changed as a whole (TLS turned on) is named alone,
 * without each of its keys.
 */
function changedSettings(previous: ExporterConfig, next: ExporterConfig): string[] {
  const before = settingValues(previous);
  const after = settingValues(next);
  const changed = [...new Set([...after.keys(), ...before.keys()])].filter(
    (path) => before.get(path) !== after.get(path),
  );
  return changed.filter((path) => !changed.some((other) => path.startsWith(`${other}.`)));
}

/**
 * Every value of the configuration, targets aside, as one comparable string per setting. The
 * values are walked from the configuration itself, so what the file's key resolved to counts too:
 * the token read from `tokenFile`, the certificate read from `server.tls.certFile` (a renewed one
 * at the same path is a change of `server.tls`). Each value belongs to the longest setting path
 * that starts its own path.
 */
function settingValues(config: ExporterConfig): Map<string, string> {
  const values = new Map<string, string>();
  const visit = (value: unknown, path: string): void => {
    if (isPlainObject(value)) {
      for (const [key, child] of Object.entries(value)) {
        visit(child, path === '' ? key : `${path}.${key}`);
      }
      return;
    }
    // Absent and undefined alike: an unset key has no value to compare.
    if (value === undefined) return;
    const setting = settingPathOf(path);
    const previous = values.get(setting);
    const entry = `${path}=${comparable(value)}`;
    values.set(setting, previous === undefined ? entry : `${previous}\n${entry}`);
  };
  for (const [key, value] of Object.entries(config)) {
    // Warnings follow from the settings, which are compared themselves.
    if (key !== 'targets' && key !== 'warnings') visit(value, key);
  }
  return values;
}

function settingPathOf(path: string): string {
  for (let end = path.length; end > 0; end = path.lastIndexOf('.', end - 1)) {
    const prefix = path.slice(0, end);
    if (SETTING_PATHS.has(prefix)) return prefix;
  }
  return path;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype
  );
}

/** A value as a string that is equal exactly when the value is; a secret only as its digest. */
function comparable(value: unknown): string {
  if (value instanceof Secret) {
    return `secret:${createHash('sha256').update(value.reveal()).digest('hex')}`;
  }
  if (value instanceof Map) return JSON.stringify([...value].sort());
  return JSON.stringify(value);
}

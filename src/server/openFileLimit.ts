import { readFileSync } from 'node:fs';
import type { Logger } from '../log/logger.js';

/**
 * Descriptors the process needs besides the HTTP server's and the Trunk client's connections:
 * stdio, the listening socket, epoll and libuv's internal pipes, files read on reload, headroom.
 */
const RESERVED_DESCRIPTORS = 64;

/** What the open-file check is told: the settings that take descriptors. */
export interface DescriptorSettings {
  readonly maxConnections: number;
  readonly maxConcurrentRequests: number;
}

/**
 * The process's soft RLIMIT_NOFILE, from Linux's /proc/self/limits (Node.js has already raised it
 * to the hard limit at start); Infinity when unlimited, undefined where that file does not exist.
 */
export function readOpenFileLimit(path = '/proc/self/limits'): number | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  return parseOpenFileLimit(text);
}

/** The soft limit in the `Max open files` row of a /proc/<pid>/limits text. */
export function parseOpenFileLimit(limits: string): number | undefined {
  const soft = /^Max open files\s+(\S+)/m.exec(limits)?.[1];
  if (soft === undefined) return undefined;
  if (soft === 'unlimited') return Infinity;
  const value = Number(soft);
  return Number.isSafeInteger(value) ? value : undefined;
}

/** Descriptors the settings may hold at once, with RESERVED_DESCRIPTORS to spare. */
export function descriptorsNeeded(settings: DescriptorSettings): number {
  return settings.maxConnections + settings.maxConcurrentRequests + RESERVED_DESCRIPTORS;
}

/**
 * Warns when the open-file limit is below what the settings need: past it, accepting a scrape or
 * opening a connection to Trunk fails with EMFILE. Returns whether the limit suffices (or is unknown).
 */
export function checkOpenFileLimit(
  settings: DescriptorSettings,
  logger: Logger,
  limit: number | undefined = readOpenFileLimit(),
): boolean {
  if (limit === undefined) return true;
  const needed = descriptorsNeeded(settings);
  if (limit >= needed) return true;
  logger.warn(
    { openFileLimit: limit, needed, ...settings },
    `the open-file limit (RLIMIT_NOFILE, ulimit -n) is ${limit}, below the ${needed} that ` +
      `server.maxConnections (${settings.maxConnections}) and trunk.maxConcurrentRequests ` +
      `(${settings.maxConcurrentRequests}) need with ${RESERVED_DESCRIPTORS} to spare: raise it ` +
      `(ulimit -n, or the container runtime's nofile limit) or lower server.maxConnections`,
  );
  return false;
}

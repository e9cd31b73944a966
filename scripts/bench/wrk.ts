// Load generation with Debian's wrk (a C program, so the load tool takes little of the CPU the
// servers under test need), reading its summary through wrk.lua.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './built.ts';

const run = promisify(execFile);

/** What one wrk run measured. */
export interface WrkResult {
  readonly requests: number;
  readonly requestsPerSecond: number;
  readonly bytes: number;
  /** Connect, read and write errors, non-2xx/3xx statuses and timeouts, summed. */
  readonly errors: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

interface WrkSummary {
  requests: number;
  durationMicros: number;
  bytes: number;
  connectErrors: number;
  readErrors: number;
  writeErrors: number;
  statusErrors: number;
  timeouts: number;
  p50Micros: number;
  p99Micros: number;
  maxMicros: number;
}

/** Path of a system binary the benchmark needs, or an error that says which package has it. */
export function requireBinary(path: string, debianPackage: string): string {
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    throw new Error(`${path} is missing: apt-get install -y ${debianPackage}`);
  }
}

/** Runs wrk against `url` with `connections` open connections for `seconds`. */
export async function runWrk(options: {
  url: string;
  connections: number;
  seconds: number;
  threads?: number;
  headers?: Readonly<Record<string, string>>;
}): Promise<WrkResult> {
  const wrk = requireBinary('/usr/bin/wrk', 'wrk');
  const headerArgs = Object.entries(options.headers ?? {}).flatMap(([name, value]) => [
    '-H',
    `${name}: ${value}`,
  ]);
  const { stdout } = await run(
    wrk,
    [
      `-t${options.threads ?? 1}`,
      `-c${options.connections}`,
      `-d${options.seconds}s`,
      '--timeout',
      '30s',
      '-s',
      join(ROOT, 'scripts/bench/wrk.lua'),
      ...headerArgs,
      options.url,
    ],
    { maxBuffer: 1024 * 1024 },
  );
  const line = /WRK_JSON (\{.*\})/.exec(stdout)?.[1];
  if (line === undefined) throw new Error(`wrk printed no summary:\n${stdout}`);
  const summary = JSON.parse(line) as WrkSummary;
  return {
    requests: summary.requests,
    requestsPerSecond: summary.requests / (summary.durationMicros / 1e6),
    bytes: summary.bytes,
    errors:
      summary.connectErrors +
      summary.readErrors +
      summary.writeErrors +
      summary.statusErrors +
      summary.timeouts,
    p50Ms: summary.p50Micros / 1000,
    p99Ms: summary.p99Micros / 1000,
    maxMs: summary.maxMicros / 1000,
  };
}

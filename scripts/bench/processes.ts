// Child processes for the benchmarks: the simulator, the exporter (the real command line), and the
// servers it is compared with. Each is stopped by its own handle, never by name.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './built.ts';
import type { SimulatorProcessSpec } from './simulatorProcess.ts';

/** A started child and how to stop it. */
export interface RunningChild {
  readonly child: ChildProcess;
  /** Resolves with the first match of `pattern` in what the child prints from now on. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  stop(): Promise<void>;
}

/**
 * Spawns a command and resolves once its stdout or stderr matches `ready`, or as soon as it runs
 * when there is no `ready` (the caller then checks readiness itself).
 */
export function startChild(
  command: string,
  args: readonly string[],
  options: {
    ready?: RegExp;
    timeoutMs?: number;
    cwd?: string;
    env?: NodeJS.ProcessEnv;
    /** Whether the child reads commands on its stdin (child.stdin); else its stdin is at its end. */
    stdin?: boolean;
  } = {},
): Promise<RunningChild & { match: RegExpMatchArray }> {
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    stdio: 'pipe',
    env: { ...process.env, ...options.env },
  });
  // At its end of file at once, as /dev/null would be, unless it takes commands.
  if (options.stdin !== true) child.stdin.end();
  let output = '';
  const watchers = new Set<(text: string) => void>();
  const waitFor = (pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> =>
    new Promise((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => {
        watchers.delete(watch);
        reject(new Error(`${command} never printed ${String(pattern)}`));
      }, timeoutMs);
      const watch = (text: string): void => {
        seen += text;
        const match = pattern.exec(seen);
        if (match === null) return;
        clearTimeout(timer);
        watchers.delete(watch);
        resolve(match);
      };
      watchers.add(watch);
    });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} not ready after ${options.timeoutMs ?? 120_000}ms:\n${output}`));
    }, options.timeoutMs ?? 120_000);
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      for (const watch of watchers) watch(chunk.toString());
      // Only the last few KB matter for an error message; the child may log a lot.
      if (output.length > 16_384) output = output.slice(-8_192);
      if (options.ready === undefined) return;
      const match = options.ready.exec(output);
      if (match === null) return;
      clearTimeout(timer);
      resolve({ child, match, waitFor, stop: () => stopChild(child) });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', reject);
    if (options.ready === undefined) {
      child.once('spawn', () => {
        clearTimeout(timer);
        resolve({
          child,
          match: [] as unknown as RegExpMatchArray,
          waitFor,
          stop: () => stopChild(child),
        });
      });
    }
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${String(code)} before it was ready:\n${output}`));
    });
  });
}

/** SIGTERM, then SIGKILL if it has not exited within five seconds. */
export function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** A loopback port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => {
        resolve(port);
      });
    });
  });
}

/**
 * The config of an exporter that serves on 127.0.0.1:`port` and polls nothing in the run (one
 * target, polled hourly, at an address nobody answers): for benchmarks of the HTTP side alone.
 * `serverLines` go under `server:`, indented as they are.
 */
export function idleExporterConfig(port: number, serverLines: readonly string[] = []): string {
  return [
    'trunk:',
    '  apiUrl: http://127.0.0.1:9/v1',
    '  token: idle-exporter-token-0123',
    'server:',
    '  address: 127.0.0.1',
    `  port: ${port}`,
    ...serverLines,
    'polling:',
    '  mergeQueueIntervalSeconds: 3600',
    'targets:',
    '  - repo: github.com/acme/web',
    '    branches: [main]',
  ].join('\n');
}

/** A fresh temporary directory. */
export function temporaryDirectory(label: string): string {
  return mkdtempSync(join(tmpdir(), `trunk-exporter-bench-${label}-`));
}

/** The simulator in its own process; resolves with its base URL once it listens. */
export async function startSimulatorProcess(
  spec: SimulatorProcessSpec,
): Promise<RunningChild & { baseUrl: string }> {
  const running = await startChild(
    process.execPath,
    ['scripts/bench/simulatorProcess.ts', JSON.stringify(spec)],
    { ready: /READY (\S+)/, stdin: spec.control === true },
  );
  return { ...running, baseUrl: running.match[1] ?? '' };
}

/** The exporter's own command line on a config file; resolves once every target was polled. */
export async function startExporterProcess(
  config: string,
  nodeOptions: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<RunningChild & { url: string }> {
  const path = join(temporaryDirectory('config'), 'config.yaml');
  writeFileSync(path, config);
  const running = await startChild(
    process.execPath,
    [...nodeOptions, 'bin/trunk-exporter.js', '--config', path],
    { ready: /serving metrics on (http:\S+)\/metrics/, env },
  );
  const url = running.match[1] ?? '';
  try {
    await waitForOk(`${url}/readyz`);
  } catch (error) {
    await running.stop();
    throw error;
  }
  return { ...running, url };
}

/** Polls `url` until it answers 200, for at most `timeoutMs`. */
export async function waitForOk(url: string, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} not OK after ${timeoutMs}ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

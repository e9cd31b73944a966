// Runs the built command line (`bin/trunk-exporter.js`, from dist/) in a child process, as a user does.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';

export const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'trunk-exporter.js');

/** A running `trunk-exporter` process and what it has printed so far. */
export interface RunningCli {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves with the base URL once the exporter logs `serving metrics on URL/metrics`. */
  readonly url: Promise<string>;
  /** Resolves with the exit code. */
  readonly exit: Promise<number | null>;
  stdout(): string;
}

/** Starts `trunk-exporter ARGS`; the URL promise rejects if none is logged within 20 s. */
export function startCli(args: readonly string[], env: Record<string, string> = {}): RunningCli {
  return startExporterProcess(process.execPath, [bin, ...args], env);
}

/** The path of the built command line, `bin/trunk-exporter.js`, for a launcher of its own. */
export const CLI_BIN = bin;

/**
 * Starts COMMAND ARGS, a process that runs the exporter (the CLI itself, or a wrapper that execs
 * it); the URL promise rejects if none is logged within 20 s (a busy machine takes seconds to start
 * Node.js and load the exporter).
 */
export function startExporterProcess(
  command: string,
  args: readonly string[],
  env: Record<string, string> = {},
): RunningCli {
  const child = spawn(command, args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const url = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`no URL logged: ${stdout}`));
    }, 20_000);
    const look = (): void => {
      const match = /serving metrics on (https?:\/\/\S+)\/metrics/.exec(stdout);
      if (match?.[1]) {
        clearTimeout(timer);
        child.stdout.off('data', look);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', look);
    void exit.then(() => {
      clearTimeout(timer);
      reject(new Error(`exited before serving: ${stdout}`));
    });
  });
  return { child, url, exit, stdout: () => stdout };
}

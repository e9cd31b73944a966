// `--check-config` in this process: the function src/main.ts runs for it, given the environment a
// child started with only PATH and `env` would have: a child spends about a second of CPU loading
// the exporter before it checks anything. test/main.test.ts runs the command line itself.
import { Writable } from 'node:stream';
import { checkConfig } from '../../src/cli/checkConfig.js';
import type { FinishedProcess } from './nodeProcess.js';

/** Checks the file at `path`; resolves with the exit code and what was printed, as a child's. */
export async function checkConfigInProcess(
  path: string,
  env: Record<string, string> = {},
): Promise<FinishedProcess> {
  const printed = { stdout: '', stderr: '' };
  const into = (stream: keyof typeof printed) =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        printed[stream] += chunk.toString();
        done();
      },
    });
  const code = await checkConfig(
    path,
    { stdout: into('stdout'), stderr: into('stderr') },
    { PATH: process.env.PATH ?? '', ...env },
  );
  return { code, ...printed };
}

// Runs Node.js on a script of the repository in a child process and collects what it printed.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

/** The repository root, where children run. */
export const REPOSITORY_ROOT = join(import.meta.dirname, '..', '..');

/** How a child ended and what it printed. */
export interface FinishedProcess {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node ...args` from the repository root with only PATH and `env` in its environment. */
export function runNode(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<FinishedProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: REPOSITORY_ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
  });
}

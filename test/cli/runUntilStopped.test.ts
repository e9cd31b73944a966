// Shutdown of the command line, in a child process of its own (the code under test ends the
// process): docs/operations.md says SIGTERM "exits 0 (at most 5 s later)", whatever is in flight.
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIST = join(import.meta.dirname, '..', '..', 'dist');

/**
 * A command that starts something whose stop() returns at once while work it cannot end keeps the
 * event loop alive, as a bcrypt comparison running in its worker thread does.
 */
function commandWithWorkStopCannotEnd(): string {
  const url = (path: string) => JSON.stringify(pathToFileURL(join(DIST, path)).href);
  return [
    `import { startThenRun } from ${url('cli/runUntilStopped.js')};`,
    `import { createLogger } from ${url('log/logger.js')};`,
    "const logger = createLogger({ level: 'info', secrets: () => [] });",
    'process.exitCode = await startThenRun(async () => {',
    '  setInterval(() => {}, 1000);',
    "  process.stdout.write('STARTED\\n');",
    '  return { stop: async () => {} };',
    '}, logger);',
  ].join('\n');
}

describe('shutdown', () => {
  it('exits 0 after the grace period when work that stop() cannot end keeps the process alive', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'shutdown-'));
    const script = join(directory, 'command.mjs');
    await writeFile(script, commandWithWorkStopCannotEnd());
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      let output = '';
      const started = new Promise<void>((resolve) => {
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('STARTED')) resolve();
        });
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      await started;
      child.kill('SIGTERM');
      // Waits for the condition (the process ending), up to the harnesses' 20 s: without the
      // deadline after stop() it never ends.
      const code = await Promise.race([
        exited,
        new Promise<'still running'>((resolve) =>
          setTimeout(() => {
            resolve('still running');
          }, 20_000),
        ),
      ]);
      expect(code).toBe(0);
      expect(output).toContain('exiting anyway');
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);
});

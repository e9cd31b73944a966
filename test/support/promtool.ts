import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

/** Runs promtool with `args` (and `input` on its stdin); resolves to its exit code and output. */
function runPromtool(
  promtool: string,
  args: readonly string[],
  input = '',
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(promtool, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, output });
    });
    child.stdin.end(input);
  });
}

/** Runs `promtool check metrics` on a page; resolves to its exit code and everything it printed. */
export function promtoolCheckMetrics(
  promtool: string,
  page: string,
): Promise<{ code: number | null; output: string }> {
  return runPromtool(promtool, ['check', 'metrics'], page);
}

/**
 * Runs `promtool test rules` on each of `files` in its own process, one per core at a time: promtool
 * runs the files of one call one after another on a single core, and each file's cases stand alone.
 * The code is the first non-zero one (0 when every file passed); the output is every file's in order.
 */
export async function promtoolTestRules(
  promtool: string,
  files: readonly string[],
): Promise<{ code: number | null; output: string }> {
  const results: { code: number | null; output: string }[] = [];
  let next = 0;
  const runNext = async (): Promise<void> => {
    for (let index = next++; index < files.length; index = next++) {
      results[index] = await runPromtool(promtool, ['test', 'rules', files[index] ?? '']);
    }
  };
  await Promise.all(Array.from({ length: availableParallelism() }, runNext));
  return {
    code: results.find(({ code }) => code !== 0)?.code ?? 0,
    output: results.map(({ output }) => output).join(''),
  };
}

import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findSystemBinary } from '../support/systemBinary.js';
import { loadScenario, replayScenario } from './scenario.js';

// promtool parses the page with Prometheus's own text parser and lints it (names, units, HELP,
// counter suffixes). It finds what a golden file cannot: escaping the parser rejects. It reads the
// Prometheus text format only (2.42 fails on an OpenMetrics exemplar); a real Prometheus parses the
// OpenMetrics page with exemplars in test/deploy/dashboardExemplars.test.ts.

interface ProcessResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runWithStdin(
  command: string,
  args: readonly string[],
  stdin: string,
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(stdin);
  });
}

const promtool = findSystemBinary('promtool', 'prometheus');

/** promtool's exit code when the page parsed and only lint problems were found. */
const LINT_PROBLEMS_EXIT_CODE = 3;

async function checkMetrics(page: string): Promise<ProcessResult> {
  return runWithStdin(promtool ?? 'promtool', ['check', 'metrics'], page);
}

describe('promtool check metrics', () => {
  it.skipIf(promtool === undefined)(
    "parses and lints the exporter's own metrics, with hostile label values, without a word",
    async () => {
      const page = await replayScenario(loadScenario('hostile-label-values')).render();
      // The page really carries the hostile values.
      expect(page).toContain('\\"quoted\\"');
      expect(page).toContain('new\\nline');
      expect(page).toContain('ünïcødé 🚀');

      const result = await checkMetrics(page);
      expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
    },
  );

  it.skipIf(promtool === undefined)(
    'parses and lints the full page, process metrics included, without a word',
    async () => {
      const page = await replayScenario(loadScenario('hostile-label-values'), {
        defaultMetrics: true,
      }).render();
      expect(page).toContain('process_cpu_seconds_total');
      expect(page).toContain('nodejs_active_handles');
      expect(page).toContain('trunk_exporter_api_request_duration_seconds_bucket');

      expect(await checkMetrics(page)).toEqual({ code: 0, stdout: '', stderr: '' });
    },
  );

  it.skipIf(promtool === undefined)(
    'parses the text-format page of histograms that carry exemplars, which it leaves out',
    async () => {
      const page = await replayScenario(loadScenario('exemplars-on-latency-histograms')).render();
      expect(page).toContain('trunk_merge_queue_time_in_queue_seconds_bucket');
      expect(await checkMetrics(page)).toEqual({ code: 0, stdout: '', stderr: '' });
    },
  );

  it.skipIf(promtool === undefined)('notices a broken page (the check can fail)', async () => {
    const result = await checkMetrics('trunk_broken{label="unterminated} 1\n');
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBe(LINT_PROBLEMS_EXIT_CODE);
  });
});

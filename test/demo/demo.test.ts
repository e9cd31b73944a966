import { afterEach, describe, expect, it } from 'vitest';
import { startDemo } from '../../src/demo/demo.js';
import type { RunningExporter } from '../../src/exporter.js';
import { silentLogger } from '../../src/log/logger.js';
import { parseExposition, sum } from '../support/exposition.js';
import { promtoolCheckMetrics } from '../support/promtool.js';
import { findSystemBinary } from '../support/systemBinary.js';

let demo: RunningExporter | undefined;
afterEach(async () => {
  await demo?.stop();
  demo = undefined;
});

const promtool = findSystemBinary('promtool');

describe('demo', () => {
  it.skipIf(promtool === undefined)(
    'serves a full page (process metrics included) that promtool check metrics accepts without a word',
    async () => {
      demo = await startDemo({
        logger: silentLogger(),
        version: '0.0.0-test',
        port: 0,
        address: '127.0.0.1',
      });
      const deadline = Date.now() + 10_000;
      while ((await fetch(`${demo.url}/readyz`)).status !== 200) {
        if (Date.now() > deadline) throw new Error('demo never became ready');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const page = await (await fetch(`${demo.url}/metrics`)).text();
      const samples = parseExposition(page);
      expect(sum(samples, 'trunk_exporter_target_up')).toBe(7);
      expect(page).toContain('process_cpu_seconds_total');
      expect(page).toContain('trunk_flaky_tests_quarantined_by_codeowner{');
      expect(await promtoolCheckMetrics(promtool ?? 'promtool', page)).toEqual({
        code: 0,
        output: '',
      });
    },
  );
});

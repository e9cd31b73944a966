// The recording rules as Prometheus computes them: promtool runs the unit tests in
// test/deploy/recording-rules/ (one file per group of rules, with series and the values the rules
// must record from them) against prometheus/rules.yaml.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { promtoolTestRules } from '../support/promtool.js';
import { findSystemBinary } from '../support/systemBinary.js';
import { ROOT } from './ruleFiles.js';

const promtool = findSystemBinary('promtool', 'prometheus');
const TESTS_DIRECTORY = join(ROOT, 'test', 'deploy', 'recording-rules');

describe('recording rules', () => {
  it.skipIf(promtool === undefined)(
    'record what their promtool unit tests expect',
    async () => {
      const files = readdirSync(TESTS_DIRECTORY)
        .filter((name) => name.endsWith('.yaml'))
        .map((name) => join(TESTS_DIRECTORY, name));
      expect(files.length).toBeGreaterThan(0);
      const { code, output } = await promtoolTestRules(promtool ?? 'promtool', files);
      expect(code, output).toBe(0);
      expect(output).not.toContain('FAILED');
    },
    // promtool evaluates every rule file's series, as alertRules' run does: on a machine busy with
    // other work that takes longer than a test's default 30 s.
    180_000,
  );
});

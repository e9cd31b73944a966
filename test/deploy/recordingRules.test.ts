// The recording rules as Prometheus computes them: promtool runs the unit tests in
// test/deploy/recording-rules/ (one file per group of rules, with series and the values the rules
// must record from them) against prometheus/rules.yaml.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findSystemBinary } from '../support/systemBinary.js';
import { ROOT } from './ruleFiles.js';

const promtool = findSystemBinary('promtool', 'prometheus');
const TESTS_DIRECTORY = join(ROOT, 'test', 'deploy', 'recording-rules');

describe('recording rules', () => {
  it.skipIf(promtool === undefined)('record what their promtool unit tests expect', () => {
    const files = readdirSync(TESTS_DIRECTORY)
      .filter((name) => name.endsWith('.yaml'))
      .map((name) => join(TESTS_DIRECTORY, name));
    expect(files.length).toBeGreaterThan(0);
    const result = spawnSync(promtool ?? 'promtool', ['test', 'rules', ...files], {
      encoding: 'utf8',
    });
    const output = `${result.stdout}${result.stderr}`;
    expect(result.status, output).toBe(0);
    expect(output).not.toContain('FAILED');
  });
});

// The alerting and recording rules as Prometheus sees them: promtool checks both files and runs the
// unit tests in test/deploy/rules/ (one file per alert). Adding an alert means adding its test file
// there; the coverage check below fails until every alert has a firing and a non-firing case.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { promtoolTestRules } from '../support/promtool.js';
import { findSystemBinary } from '../support/systemBinary.js';
import { credentialAdviceProblems } from './credentialAdvice.js';
import {
  RULE_FILES,
  RULE_TESTS_DIRECTORY,
  alertingRules,
  readYamlFile,
  type RuleFile,
} from './ruleFiles.js';

const promtool = findSystemBinary('promtool', 'prometheus');

const ruleTestFiles = readdirSync(RULE_TESTS_DIRECTORY)
  .filter((name) => name.endsWith('.yaml'))
  .map((name) => join(RULE_TESTS_DIRECTORY, name));

interface AlertRuleTest {
  readonly alertname: string;
  readonly exp_alerts?: readonly unknown[] | null;
}
interface RuleTestFile {
  readonly rule_files: readonly string[];
  readonly tests: readonly { readonly alert_rule_test?: readonly AlertRuleTest[] }[];
}

/** The alert names a promtool test file asserts on. */
function alertsTestedIn(file: string): Set<string> {
  const { tests } = readYamlFile(file) as RuleTestFile;
  return new Set(
    tests.flatMap((test) => test.alert_rule_test ?? []).map((ruleTest) => ruleTest.alertname),
  );
}

/**
 * Each promtool test file rewritten into `directory` to load prometheus/alerts.yaml cut down to the
 * alerts it asserts on, word for word and in their own groups. promtool evaluates every loaded rule
 * at every step of every case, and no alert reads another's result (none queries ALERTS, checked
 * below), so the others would only cost CPU.
 */
function ruleTestsWithTheirAlertsOnly(directory: string): string[] {
  const alerts = readYamlFile(RULE_FILES[0] ?? '') as RuleFile;
  return ruleTestFiles.map((file) => {
    const name = basename(file, '.yaml');
    const tested = alertsTestedIn(file);
    const groups = alerts.groups
      .map((group) => ({
        ...group,
        rules: group.rules.filter((rule) => tested.has(rule.alert ?? '')),
      }))
      .filter((group) => group.rules.length > 0);
    const cutAlerts = join(directory, `${name}.alerts.yaml`);
    writeFileSync(cutAlerts, stringify({ groups }));
    // The test file is copied as text: parsed and written again, `values: 0x90` would become 144.
    // Any other rule file it loads stays as it is, found from the test file's own directory.
    const text = readFileSync(file, 'utf8');
    const ruleFilesLine = /^rule_files:.*$/m.exec(text)?.[0];
    if (ruleFilesLine === undefined) throw new Error(`${file} has no one-line rule_files`);
    const ruleFiles = (parse(ruleFilesLine) as RuleTestFile).rule_files.map((path) => {
      const absolute = resolve(dirname(file), path);
      return absolute === RULE_FILES[0] ? cutAlerts : absolute;
    });
    const rewritten = join(directory, `${name}.yaml`);
    writeFileSync(
      rewritten,
      text.replace(ruleFilesLine, `rule_files: ${JSON.stringify(ruleFiles)}`),
    );
    return rewritten;
  });
}

/** Alert names with an expected firing case and with an expected silent case, over every test file. */
function testedAlerts(): { firing: Set<string>; silent: Set<string> } {
  const firing = new Set<string>();
  const silent = new Set<string>();
  for (const file of ruleTestFiles) {
    const { tests } = readYamlFile(file) as RuleTestFile;
    for (const ruleTest of tests.flatMap((test) => test.alert_rule_test ?? [])) {
      (ruleTest.exp_alerts?.length ? firing : silent).add(ruleTest.alertname);
    }
  }
  return { firing, silent };
}

function runPromtool(args: readonly string[]): { status: number | null; output: string } {
  const result = spawnSync(promtool ?? 'promtool', args, { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('alerting rules', () => {
  const rules = alertingRules();

  it('give every alert a severity, a summary, a description naming repo and branch, and a for', () => {
    expect(rules.length).toBeGreaterThanOrEqual(10);
    for (const rule of rules) {
      const where = `alert ${rule.alert}`;
      expect(['critical', 'warning', 'info'], where).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, where).toBeTruthy();
      expect(rule.for, where).toMatch(/^\d+[smh]$/);
      // Alerts without repo/branch labels (API-wide, exporter absent) list the failing targets
      // through a query, or say that every repository is affected.
      expect(rule.annotations?.description, where).toMatch(
        /\$labels\.repo|\.Labels\.repo|every repository/,
      );
      if (/\$labels\.repo/.test(rule.annotations?.description ?? '')) {
        expect(rule.annotations?.description, where).toMatch(/branch|all branches/);
      }
    }
  });

  it('give advice in their annotations that fits either credential', () => {
    const problems = rules.flatMap((rule) =>
      credentialAdviceProblems(
        `${rule.annotations?.summary ?? ''} ${rule.annotations?.description ?? ''}`,
      ).map((problem) => `${rule.alert}: ${problem}`),
    );
    expect(problems).toEqual([]);
  });

  it('each have a promtool unit test that fires and one that does not', () => {
    const { firing, silent } = testedAlerts();
    const names = rules.map((rule) => rule.alert);
    for (const name of names) {
      expect(firing, `${name} needs a test case where it fires`).toContain(name);
      expect(silent, `${name} needs a test case where it does not fire`).toContain(name);
    }
    // A test naming an alert that does not exist would pass its empty cases vacuously.
    for (const name of [...firing, ...silent])
      expect(names, `unknown alert ${name}`).toContain(name);
  });

  it.skipIf(promtool === undefined)('load in promtool (check rules)', () => {
    const result = runPromtool(['check', 'rules', ...RULE_FILES]);
    expect(result.output).toMatch(/SUCCESS: \d+ rules found[\s\S]*SUCCESS: \d+ rules found/);
    expect(result.status, result.output).toBe(0);
  });

  // promtool evaluates every rule at every minute of every case: seconds of CPU, more on a busy machine.
  it.skipIf(promtool === undefined)(
    'pass their promtool unit tests (test rules)',
    async () => {
      expect(ruleTestFiles.length).toBe(rules.length);
      expect(readFileSync(RULE_FILES[0] ?? '', 'utf8')).not.toMatch(/\bALERTS/);
      const directory = mkdtempSync(join(tmpdir(), 'alert-rule-tests-'));
      try {
        const { code, output } = await promtoolTestRules(
          promtool ?? 'promtool',
          ruleTestsWithTheirAlertsOnly(directory),
        );
        expect(code, output).toBe(0);
        expect(output).not.toContain('FAILED');
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    },
    180_000,
  );
});

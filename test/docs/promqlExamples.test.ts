// The documentation's PromQL examples are part of the product: each must be valid PromQL. promtool
// parses them as the expressions of recording rules.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findSystemBinary } from '../support/systemBinary.js';
import { pagePaths, readPage } from './pages.js';

/** Expressions of the ```promql blocks: comment lines dropped, indented lines continue the previous one. */
function documentedExpressions(): string[] {
  const pages = pagePaths().map(readPage).join('\n');
  const expressions: string[] = [];
  for (const block of pages.matchAll(/```promql\n([\s\S]*?)```/g)) {
    for (const line of (block[1] ?? '').split('\n')) {
      if (line.trim() === '' || line.trim().startsWith('#')) continue;
      if (/^\s/.test(line) && expressions.length > 0)
        expressions.push(`${expressions.pop() ?? ''} ${line.trim()}`);
      else expressions.push(line);
    }
  }
  return expressions;
}

const promtool = findSystemBinary('promtool', 'prometheus');

describe('the PromQL examples of the README and docs/', () => {
  it('has PromQL examples for paused queues, stuck PRs and quarantine growth', () => {
    const expressions = documentedExpressions().join('\n');
    expect(expressions).toContain('state=~"paused|draining"');
    expect(expressions).toContain(
      'trunk_merge_queue_oldest_state_change_timestamp_seconds{state="testing"}',
    );
    expect(expressions).toContain('delta(trunk_flaky_tests_quarantined[1d])');
  });

  it.skipIf(promtool === undefined)('has only PromQL that promtool accepts', () => {
    const expressions = documentedExpressions();
    expect(expressions.length).toBeGreaterThan(10);
    const rules = [
      'groups:',
      '  - name: documentation',
      '    rules:',
      ...expressions.flatMap((expression, index) => [
        `      - record: documentation:example_${index}`,
        `        expr: ${JSON.stringify(expression)}`,
      ]),
    ].join('\n');
    const file = join(mkdtempSync(join(tmpdir(), 'trunk-exporter-promql-')), 'rules.yaml');
    writeFileSync(file, rules);
    const result = spawnSync(promtool ?? 'promtool', ['check', 'rules', file], {
      encoding: 'utf8',
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
  });
});

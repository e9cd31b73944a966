// What the docs say `polling.flakyTestDetails: false` drops is what an exporter with it drops: each
// quarantine family served with every page walked and missing with the total only is named where
// the setting is explained (config.example.yaml and the API cost section of docs/operations.md).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configYaml, startFrozenSimulator, startTestExporter } from '../support/exporterHarness.js';
import { pageSection, ROOT } from './pages.js';

const TARGETS = ['  - repo: github.com/acme/web', '    branches: [main]', '    flakyTests: true'];

/** The quarantine families an exporter serves for the frozen simulator with the setting given. */
async function quarantineFamilies(flakyTestDetails: boolean): Promise<Set<string>> {
  const { simulator } = await startFrozenSimulator();
  const subject = await startTestExporter(
    configYaml({
      apiUrl: simulator.baseUrl,
      targets: TARGETS.join('\n'),
      polling: [
        '  mergeQueueIntervalSeconds: 600',
        '  flakyTestsIntervalSeconds: 600',
        `  flakyTestDetails: ${flakyTestDetails}`,
      ].join('\n'),
    }),
  );
  await subject.waitUntilReady();
  const names = (await subject.samples()).map(({ name }) => name);
  return new Set(names.filter((name) => name.startsWith('trunk_flaky_tests_')));
}

/** The comment lines right above `flakyTestDetails:` in config.example.yaml. */
function exampleComment(): string {
  const lines = readFileSync(join(ROOT, 'config.example.yaml'), 'utf8').split('\n');
  const at = lines.findIndex((line) => /^\s*(# )?flakyTestDetails:/.test(line));
  const comment: string[] = [];
  for (let index = at - 1; index >= 0 && /^\s*#/.test(lines[index] ?? ''); index--)
    comment.unshift(lines[index] ?? '');
  return comment.join('\n');
}

describe('polling.flakyTestDetails: false, as documented', () => {
  it('drops exactly the families the docs name', async () => {
    const [walked, totalOnly] = await Promise.all([
      quarantineFamilies(true),
      quarantineFamilies(false),
    ]);
    const dropped = [...walked].filter((name) => !totalOnly.has(name));
    expect(dropped.length).toBeGreaterThan(0);
    const apiCost = pageSection('docs/operations.md', '## Polling and API cost');
    const bullet = apiCost.split('\n- ').find((item) => item.includes('flakyTestDetails: false'));
    for (const [where, text] of [
      ['config.example.yaml', exampleComment()],
      ['docs/operations.md', bullet ?? ''],
    ] as const) {
      const named = new Set(text.match(/trunk_flaky_tests_\w+/g));
      for (const name of dropped) expect(named.has(name), `${where} names ${name}`).toBe(true);
      // Any other family named there is one that stays.
      for (const name of named)
        if (!dropped.includes(name)) expect(totalOnly.has(name), `${where}: ${name}`).toBe(true);
    }
  });
});

// metrics.exclude end to end: a real exporter polling a real simulator drops the excluded families
// from its page after a reload (SIGHUP's path), and brings them back after another.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configYaml, startFrozenSimulator, startTestExporter } from '../support/exporterHarness.js';

describe('metrics.exclude on reload', () => {
  it('drops the excluded families at once, and a later reload brings them back', async () => {
    const { simulator } = await startFrozenSimulator();
    const file = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-selection-')), 'config.yaml');
    const yaml = (metrics: string) =>
      `${configYaml({
        apiUrl: simulator.baseUrl,
        targets: '  - repo: github.com/acme/web\n    branches: [main]',
      })}\n${metrics}`;
    await writeFile(file, yaml(''));
    const run = await startTestExporter(yaml(''), 'info', file);
    await run.waitUntilReady();
    expect(await run.scrape()).toMatch(/^trunk_merge_queue_pull_requests\{/m);

    await writeFile(file, yaml('metrics:\n  exclude: [trunk_merge_queue_pull_requests*]'));
    expect((await run.exporter.reload('SIGHUP')).applied).toBe(true);
    const excluded = await run.scrape();
    expect(excluded).not.toMatch(/^trunk_merge_queue_pull_requests/m);
    expect(excluded).toMatch(/^trunk_merge_queue_concurrency\{/m);
    expect(excluded).toMatch(/^trunk_exporter_target_up\{/m);

    await writeFile(file, yaml(''));
    expect((await run.exporter.reload('SIGHUP')).applied).toBe(true);
    expect(await run.scrape()).toMatch(/^trunk_merge_queue_pull_requests\{/m);
  });
});

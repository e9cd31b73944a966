// The Helm chart's StatefulSet mode, run for real: the shell line of the `hostname` ordinal source
// starts the exporter as the shard its pod name ends in, and an empty --shard (a pod without the
// pod-index label) stops it at once. helmRendered.test.ts checks the rendered objects.
import { mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SIMULATOR_TOKEN, configYaml, startFrozenSimulator } from '../support/exporterHarness.js';
import { parseExposition, select } from '../support/exposition.js';
import { CLI_BIN, startCli, startExporterProcess } from '../support/cli.js';
import { findSystemBinary } from '../support/systemBinary.js';
import { helmRenderer, renderChart } from './helmRender.js';
import { FIXTURES } from './helmValues.js';
import { CHART } from './ruleFiles.js';

const shell = findSystemBinary('sh', 'dash');
const renderer = await helmRenderer();

/** The container command the chart renders with ordinalFrom hostname. */
async function hostnameCommand(): Promise<string[] | undefined> {
  const { manifests } = await renderChart(renderer ?? '', CHART, {
    valueFiles: [join(FIXTURES, 'valid-statefulset-sharded.yaml')],
  });
  const statefulSet = manifests.find(
    (manifest) => (manifest.object as { kind: string }).kind === 'StatefulSet',
  )?.object as { spec: { template: { spec: { containers: { command?: string[] }[] } } } };
  return statefulSet.spec.template.spec.containers[0]?.command;
}

describe('Helm chart, StatefulSet mode', () => {
  it('rejects an empty --shard, as a pod without the pod-index label (Kubernetes < 1.28) gets', async () => {
    const cli = startCli(['--config', 'unused.yaml', '--shard=', '--total-shards=2']);
    cli.url.catch(() => undefined); // it never serves
    expect(await cli.exit).toBe(2);
    expect(cli.stdout()).toContain('--shard: expected a whole number, got ""');
  });

  it.skipIf(shell === undefined || renderer === undefined)(
    'with ordinalFrom hostname, runs the exporter as the shard its pod name ends in',
    async () => {
      const command = await hostnameCommand();
      expect(command?.slice(0, 2)).toEqual(['/bin/sh', '-c']);
      const [, , script = '', name = ''] = command ?? [];
      expect(name).toBe('trunk-exporter');
      // `trunk-exporter` on PATH, as the image links it into /usr/local/bin.
      const directory = await mkdtemp(join(tmpdir(), 'trunk-exporter-statefulset-'));
      await symlink(CLI_BIN, join(directory, 'trunk-exporter'));
      const { simulator } = await startFrozenSimulator();
      const config = join(directory, 'config.yaml');
      const targets = '  - repo: github.com/acme/web\n    branches: [main, release]';
      await writeFile(config, configYaml({ apiUrl: simulator.baseUrl, targets }));
      const cli = startExporterProcess(
        shell ?? 'sh',
        ['-c', script, name, '--config', config, '--total-shards=3'],
        {
          PATH: `${directory}:${process.env.PATH ?? ''}`,
          HOSTNAME: 'release-trunk-exporter-2',
          TRUNK_API_TOKEN: SIMULATOR_TOKEN,
        },
      );
      try {
        const url = await cli.url;
        const samples = parseExposition(await (await fetch(`${url}/metrics`)).text());
        expect(select(samples, 'trunk_exporter_shard_ordinal')[0]?.value).toBe(2);
        expect(select(samples, 'trunk_exporter_total_shards')[0]?.value).toBe(3);
      } finally {
        // `exec` made the exporter the shell's process: the signal reaches it.
        cli.child.kill('SIGTERM');
        expect(await cli.exit).toBe(0);
      }
    },
  );
});

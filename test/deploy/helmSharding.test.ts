// The Helm chart's StatefulSet mode: one pod per shard, each deriving --shard from its ordinal, a
// headless Service for the StatefulSet, the main Service over every pod and one ServiceMonitor
// for all of them. Without a helm binary the templates are checked with their actions masked, and
// the shell line of the `hostname` ordinal source runs for real.
import { mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SIMULATOR_TOKEN, configYaml, startFrozenSimulator } from '../support/exporterHarness.js';
import { parseExposition, select } from '../support/exposition.js';
import { CLI_BIN, startCli, startExporterProcess } from '../support/cli.js';
import { findSystemBinary } from '../support/systemBinary.js';
import { maskActions } from './goTemplate.js';
import {
  helpers,
  maskedPodTemplate,
  read,
  template,
  templateFiles,
  type MaskedContainer,
  type Values,
} from './helmValues.js';
import { CHART } from './ruleFiles.js';

const shell = findSystemBinary('sh');

const STATEFULSET_ONLY = /^\{\{- if eq \.Values\.workload\.kind "StatefulSet" \}\}\n/;

interface MaskedObject {
  kind: string;
  metadata: { name: string; labels?: Values };
  spec: Values & {
    selector?: { matchLabels?: Values; matchExpressions?: Values[] };
    ports?: Values[];
  };
}
const masked = (name: string) => parse(maskActions(template(name))) as MaskedObject;
const container = (): MaskedContainer => {
  const first = maskedPodTemplate().spec.containers[0];
  if (first === undefined) throw new Error('the pod template has no container');
  return first;
};

describe('Helm chart, StatefulSet mode', () => {
  it('renders exactly one workload for each kind values.schema.json allows', () => {
    const schema = JSON.parse(read(join(CHART, 'values.schema.json'))) as {
      properties: { workload: { properties: { kind: { enum: string[] } } } };
    };
    expect(schema.properties.workload.properties.kind.enum).toEqual(['Deployment', 'StatefulSet']);
    expect(template('deployment.yaml')).toMatch(
      /^\{\{- if eq \.Values\.workload\.kind "Deployment" \}\}\n/,
    );
    expect(template('statefulset.yaml')).toMatch(STATEFULSET_ONLY);
    for (const name of ['deployment.yaml', 'statefulset.yaml']) {
      expect(template(name)).toContain('include "trunk-exporter.podTemplate" . | nindent 4');
    }
  });

  it('runs one pod per shard, all at once, named by the headless Service', () => {
    const statefulSet = masked('statefulset.yaml');
    expect(statefulSet.kind).toBe('StatefulSet');
    expect(statefulSet.spec).toMatchObject({
      replicas: 'TEMPLATE',
      serviceName: 'TEMPLATE',
      podManagementPolicy: 'Parallel',
    });
    const text = template('statefulset.yaml');
    expect(text).toContain('replicas: {{ .Values.sharding.shards }}');
    expect(text).toContain('serviceName: {{ include "trunk-exporter.headlessServiceName" . }}');
    expect(template('service-headless.yaml')).toContain(
      'name: {{ include "trunk-exporter.headlessServiceName" . }}',
    );
  });

  it('has a headless Service for the StatefulSet only, and a main Service over every pod', () => {
    expect(template('service-headless.yaml')).toMatch(STATEFULSET_ONLY);
    const headless = masked('service-headless.yaml');
    expect(headless.kind).toBe('Service');
    expect(headless.spec.clusterIP).toBe('None');
    expect(headless.metadata.labels).toMatchObject({ 'app.kubernetes.io/component': 'headless' });
    // The main Service is unconditional and selects by the pods' selector labels alone.
    const main = template('service.yaml');
    expect(main).not.toMatch(/^\{\{- if/);
    expect(main).toMatch(
      /selector:\n\s+\{\{- include "trunk-exporter.selectorLabels" \. \| nindent 4 \}\}\n$/,
    );
    expect(main).not.toContain('app.kubernetes.io/component');
  });

  it('scrapes every shard once: one ServiceMonitor over the main Service, not the headless one', () => {
    const monitor = masked('servicemonitor.yaml');
    expect(monitor.kind).toBe('ServiceMonitor');
    expect(monitor.spec.selector?.matchExpressions).toEqual([
      { key: 'app.kubernetes.io/component', operator: 'NotIn', values: ['headless'] },
    ]);
    // One for the whole release (not one per shard), and only the main Service lacks the label.
    const kinds = templateFiles
      .filter((name) => name.endsWith('.yaml'))
      .map((name) => masked(name).kind);
    expect(kinds.filter((kind) => kind === 'ServiceMonitor')).toHaveLength(1);
    expect(template('servicemonitor.yaml')).not.toContain('range');
  });

  it('gives each pod --shard from its pod-index label and --total-shards in its template', () => {
    const { args, env } = container();
    expect(args).toContain('--shard=$(SHARD)');
    expect(args).toContain('--total-shards=TEMPLATE');
    expect(env).toContainEqual({
      name: 'SHARD',
      valueFrom: { fieldRef: { fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']" } },
    });
    // The shard count is in the pod template, so changing it rolls every pod.
    expect(helpers).toMatch(
      /\{\{- if eq \.Values\.workload\.kind "StatefulSet" \}\}[\s\S]*- --total-shards=\{\{ \.Values\.sharding\.shards \}\}\n\s+\{\{- end \}\}/,
    );
  });

  it('rejects an empty --shard, as a pod without the pod-index label (Kubernetes < 1.28) gets', async () => {
    const cli = startCli(['--config', 'unused.yaml', '--shard=', '--total-shards=2']);
    cli.url.catch(() => undefined); // it never serves
    expect(await cli.exit).toBe(2);
    expect(cli.stdout()).toContain('--shard: expected a whole number, got ""');
  });

  it.skipIf(shell === undefined)(
    'with ordinalFrom hostname, runs the exporter as the shard its pod name ends in',
    async () => {
      const { command } = container();
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

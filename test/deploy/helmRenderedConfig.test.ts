// What the Helm chart hands the exporter and Prometheus, rendered on each value set: a config the
// exporter accepts with the pod's files mounted where the pod mounts them (--check-config), a
// command line it accepts in every pod, rule groups promtool accepts; the values the chart must
// refuse, refused with a message that names them; and, on every combination of credentials and
// the settings that need one and around the exporter's limits, the chart refusing exactly what the
// exporter's config check refuses.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseCommandLine } from '../../src/cli/arguments.js';
import { checkConfigInProcess } from '../support/checkConfig.js';
import type { FinishedProcess } from '../support/nodeProcess.js';
import { findSystemBinary } from '../support/systemBinary.js';
import { helmRenderer, RenderError, renderChart } from './helmRender.js';
import { FIXTURES } from './helmValues.js';
import {
  renderValueSet,
  valueSets,
  type Container,
  type InstalledValues,
  type Workload,
} from './helmValueSets.js';
import type { KubeObject } from './kubernetesObjects.js';
import { layOutPodFiles } from './podFiles.js';
import { checkRenderedConfig, EXISTING_SIGNING_SECRET } from './renderedConfigCheck.js';
import { CHART } from './ruleFiles.js';

const run = promisify(execFile);
const renderer = await helmRenderer();
const promtool = findSystemBinary('promtool', 'prometheus');

/** Values the chart's templates refuse (after the schema accepts them), with what the message says. */
const REFUSED: Readonly<Record<string, string>> = {
  'refused-webhooks-ingress-without-webhooks.yaml':
    'webhooks.ingress.enabled: set webhooks.enabled too',
  'refused-webhooks-httproute-without-parent.yaml':
    'webhooks.httpRoute.parentRefs: name the Gateway to attach the route to',
  'refused-webhooks-without-signing-secret.yaml':
    'webhooks.signingSecret.value or webhooks.signingSecret.existingSecret',
  'refused-webhooks-on-sharded-statefulset.yaml':
    'webhooks.enabled: not with a sharded StatefulSet',
  'refused-discovery-with-token-only.yaml':
    'config.discovery.enabled: needs an API key (apiKey.value or apiKey.existingSecret;',
  'refused-flaky-tests-with-token-only-without-org-url-slug.yaml':
    'config.trunk.orgUrlSlug: required when a target has flakyTests: true and no API key is set',
  'refused-target-twice-in-two-letter-cases.yaml':
    'config.targets[1].branches: duplicate target github.com/Acme/Web@main (already in config.targets[0];',
  'refused-metrics-include-of-no-family.yaml':
    'config.metrics.include[1]: "trunk_merge_queue_stat" matches no metric family',
  'refused-discovery-branches-with-101-globs-with-stars.yaml':
    'config.discovery.branches: 101 globs with *, at most 100 (each is matched against every queue at each discovery); name more without *',
  'refused-metrics-exclude-of-target-up.yaml':
    'config.metrics.exclude[0]: "*_target_up" cannot be excluded: trunk_exporter_target_up always stay on the page',
};

// The value sets side by side: each mostly waits on a child process (the renderer, promtool) and
// writes only into directories of its own. --check-config runs in this process
// (test/support/checkConfig.ts): ten exporter children at once, a second of CPU each to load,
// outran 30 s on a busy machine.
const describeSets = describe.skipIf(renderer === undefined).concurrent;

describeSets.each(valueSets)('Helm chart rendered: $name', (set) => {
  let objects: readonly KubeObject[];
  let values: InstalledValues;
  let workload: Workload;
  let container: Container;
  beforeAll(async () => {
    ({ objects, values, workload, container } = await renderValueSet(renderer ?? '', set));
  });
  const byKind = (kind: string) => objects.filter((object) => object.kind === kind);

  it('embeds a config file the exporter accepts (--check-config, with the pod files mounted)', async () => {
    const { config, result } = await checkRenderedConfig(objects, workload, container, values);
    // Its stderr names a file not read in time (FILE_READ_TIMEOUT_MS) should this process be held.
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/checked-config\.yaml: OK \(/);
    // Nothing the chart writes by default draws a warning (an API v1 only setting beside a key):
    // stderr is empty.
    // The exporter listens where the pod says it does.
    const server = (config as { server: { port: number; tls?: object } }).server;
    expect(container.ports.map((port) => port.containerPort)).toContain(server.port);
    expect(server.tls !== undefined).toBe(values.tls.existingSecret !== '');
  });

  it('hands the exporter every key of `config` as given, but trunk and server, which it builds', () => {
    const file = byKind('ConfigMap')
      .map((object) => (object.data as Record<string, string> | undefined)?.['config.yaml'])
      .find((text) => text !== undefined);
    const rendered = parse(file ?? '') as Record<string, unknown>;
    const given = Object.entries(values.config).filter(
      ([key, value]) => key !== 'trunk' && key !== 'server' && value !== null,
    );
    expect(given.length).toBeGreaterThan(0);
    for (const [key, value] of given) expect(rendered[key], key).toEqual(value);
  });

  it('gives the exporter the webhook settings with the signing secret as a mounted file, never in the ConfigMap', () => {
    const root = layOutPodFiles(workload.spec.template.spec, objects, {
      [values.token.existingSecret]: { [values.token.existingSecretKey]: 'token' },
      [values.apiKey.existingSecret]: { [values.apiKey.existingSecretKey]: 'trunk_v2_key' },
      [values.webhooks.signingSecret.existingSecret]: {
        [values.webhooks.signingSecret.existingSecretKey]: EXISTING_SIGNING_SECRET,
      },
      [values.tls.existingSecret]: { 'tls.crt': '', 'tls.key': '' },
    });
    const configMapText = JSON.stringify(byKind('ConfigMap'));
    const config = parse(readFileSync(join(root, '/etc/trunk-exporter/config.yaml'), 'utf8')) as {
      webhooks?: Record<string, unknown>;
    };
    if (!values.webhooks.enabled) {
      expect(config.webhooks).toBeUndefined();
      return;
    }
    expect(config.webhooks).toEqual({
      enabled: true,
      path: values.webhooks.path,
      toleranceSeconds: values.webhooks.toleranceSeconds,
      bodyTimeoutSeconds: values.webhooks.bodyTimeoutSeconds,
      signingSecretFile: '/etc/trunk-exporter/webhook/signing-secret',
    });
    const secret =
      values.webhooks.signingSecret.existingSecret === ''
        ? values.webhooks.signingSecret.value
        : EXISTING_SIGNING_SECRET;
    expect(readFileSync(join(root, '/etc/trunk-exporter/webhook/signing-secret'), 'utf8')).toBe(
      secret,
    );
    expect(configMapText).not.toContain(secret);
    expect(configMapText).not.toContain('whsec_');
  });

  it('starts the exporter with a command line it accepts, in each pod', () => {
    const shards = values.workload.kind === 'StatefulSet' ? values.sharding.shards : 1;
    for (let ordinal = 0; ordinal < shards; ordinal += 1) {
      // podIndexLabel: the kubelet expands $(SHARD); hostname: the shell line prepends --shard.
      const args = container.args.map((arg) => arg.replace('$(SHARD)', String(ordinal)));
      const argv = container.command === undefined ? args : [`--shard=${ordinal}`, ...args];
      const command = parseCommandLine(argv);
      if (command.name !== 'run') throw new Error(`not a run command: ${command.name}`);
      expect(command.configPath).toBe('/etc/trunk-exporter/config.yaml');
      expect(command.port ?? values.containerPort).toBe(values.containerPort);
      expect(command.sharding).toEqual(
        values.workload.kind === 'StatefulSet' ? { shard: ordinal, totalShards: shards } : {},
      );
    }
  });

  it.skipIf(promtool === undefined)(
    'has a PrometheusRule whose groups promtool accepts, or none when disabled',
    async () => {
      const rules = byKind('PrometheusRule');
      expect(rules).toHaveLength(values.prometheusRule.enabled ? 1 : 0);
      for (const rule of rules) {
        expect(rule.metadata.labels).toMatchObject(values.prometheusRule.labels);
        const file = join(mkdtempSync(join(tmpdir(), 'trunk-exporter-rule-')), 'rules.yaml');
        writeFileSync(file, stringify(rule.spec));
        const { stdout } = await run(promtool ?? 'promtool', ['check', 'rules', file]);
        expect(stdout).toContain('SUCCESS');
        const { groups } = rule.spec as { groups: { name: string }[] };
        const fileGroups = ['rules.yaml', 'alerts.yaml'].flatMap(
          (name) =>
            (
              parse(readFileSync(join(CHART, 'files', name), 'utf8')) as {
                groups: { name: string }[];
              }
            ).groups,
        );
        expect(groups.slice(0, fileGroups.length)).toEqual(fileGroups);
      }
    },
  );
});

describe.skipIf(renderer === undefined)('Helm chart rendered with values it must refuse', () => {
  const render = (file: string) =>
    renderChart(renderer ?? '', CHART, { valueFiles: [join(FIXTURES, file)] }).then(
      () => 'rendered',
      (error: unknown) => (error instanceof RenderError ? error.message : String(error)),
    );

  it.each(readdirSync(FIXTURES).filter((name) => name.startsWith('invalid-')))(
    'rejects %s by values.schema.json, before rendering',
    async (name) => {
      expect(await render(name)).toContain("values don't meet the specifications of the schema");
    },
  );

  it('has a message for every refused-* values fixture', () => {
    expect(
      readdirSync(FIXTURES)
        .filter((name) => name.startsWith('refused-'))
        .sort(),
    ).toEqual(Object.keys(REFUSED).sort());
  });

  it.each(Object.entries(REFUSED))('refuses %s, naming the values', async (name, message) => {
    const result = await render(name);
    expect(result).not.toContain("values don't meet the specifications of the schema");
    expect(result).toContain(message);
  });

  it('fails on the defaults alone, naming config.targets', async () => {
    const message = await renderChart(renderer ?? '', CHART).then(
      () => 'rendered',
      (error: unknown) => String(error),
    );
    expect(message).toContain('config.targets: list at least one repository');
  });

  it('fails without a token, naming token.value and token.existingSecret', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'trunk-exporter-values-')), 'values.yaml');
    writeFileSync(
      file,
      'config:\n  targets:\n    - repo: github.com/acme/web\n      branches: [main]\n',
    );
    const message = await renderChart(renderer ?? '', CHART, { valueFiles: [file] }).then(
      () => 'rendered',
      (error: unknown) => String(error),
    );
    expect(message).toContain('token.value or token.existingSecret: the Trunk API token');
  });
});

/** The credentials a user gives the chart, and the same as files of the exporter's own config. */
const CREDENTIALS = [
  { name: 'token.value', values: { token: { value: 'not-a-real-token' } }, files: ['tokenFile'] },
  {
    name: 'apiKey.existingSecret',
    values: { apiKey: { existingSecret: 'trunk-api-key' } },
    files: ['apiKeyFile'],
  },
  {
    name: 'token.existingSecret and apiKey.value',
    values: {
      token: { existingSecret: 'trunk-api-token' },
      apiKey: { value: 'trunk_v2_not-a-real-key' },
    },
    files: ['tokenFile', 'apiKeyFile'],
  },
] as const;
/** Every combination of the settings the exporter's rules between credentials and config read. */
const CREDENTIAL_COMBINATIONS = CREDENTIALS.flatMap((credentials) =>
  [false, true].flatMap((discovery) =>
    [false, true].flatMap((flakyTests) =>
      ['', 'acme'].map((orgUrlSlug) => ({ credentials, discovery, flakyTests, orgUrlSlug })),
    ),
  ),
);

describe
  .skipIf(renderer === undefined)
  .concurrent('Helm chart and exporter agree on the credentials each setting needs', () => {
    it.each(CREDENTIAL_COMBINATIONS)(
      '$credentials.name, discovery.enabled $discovery, flakyTests $flakyTests, orgUrlSlug "$orgUrlSlug"',
      async ({ credentials, discovery, flakyTests, orgUrlSlug }) => {
        const directory = mkdtempSync(join(tmpdir(), 'trunk-exporter-credentials-'));
        const targets = [{ repo: 'github.com/acme/web', branches: ['main'], flakyTests }];
        const valuesFile = join(directory, 'values.yaml');
        writeFileSync(
          valuesFile,
          stringify({
            config: { trunk: { orgUrlSlug }, discovery: { enabled: discovery }, targets },
            ...credentials.values,
          }),
        );
        // The same settings as the exporter's own file: the chart leaves an empty orgUrlSlug out.
        writeFileSync(join(directory, 'tokenFile'), 'not-a-real-token');
        writeFileSync(join(directory, 'apiKeyFile'), 'trunk_v2_not-a-real-key');
        const exporterFile = join(directory, 'config.yaml');
        writeFileSync(
          exporterFile,
          stringify({
            trunk: {
              ...Object.fromEntries(credentials.files.map((key) => [key, join(directory, key)])),
              ...(orgUrlSlug === '' ? {} : { orgUrlSlug }),
            },
            discovery: { enabled: discovery },
            targets,
          }),
        );
        const exporter = await checkConfigInProcess(exporterFile);
        const chart = await chartVerdict(valuesFile);
        expect(chart, exporter.stderr).toBe(exporter.code === 0 ? 'accepts' : 'refuses');
      },
    );
  });

/**
 * What the chart makes of a values file: it renders a config the exporter accepts, refuses at
 * render (by a template, or also by values.schema.json when `refusedBy` allows it), or renders a
 * config the exporter refuses (with the exporter's words).
 */
async function chartVerdict(
  valuesFile: string,
  refusedBy: 'template' | 'schema or template' = 'template',
): Promise<string> {
  return renderValueSet(renderer ?? '', { name: 'combination', file: valuesFile })
    .then(async ({ objects, workload, container, values }) => {
      const { result } = await checkRenderedConfig(objects, workload, container, values);
      return result.code === 0
        ? 'accepts'
        : `renders a config the exporter refuses: ${result.stderr}`;
    })
    .catch((error: unknown) => {
      const bySchema = error instanceof RenderError && error.message.includes("don't meet");
      if (error instanceof RenderError && (!bySchema || refusedBy === 'schema or template')) {
        return 'refuses';
      }
      throw error;
    });
}

/** Targets written by hand around one repository@branch in other letter cases and forms. */
const TARGET_LISTS: Readonly<Record<string, readonly object[]>> = {
  'one repository in two letter cases, one branch': [
    { repo: 'github.com/acme/web', branches: ['main'] },
    { repo: 'github.com/Acme/Web', branches: ['main'] },
  ],
  'one repository in two letter cases, two branches': [
    { repo: 'github.com/acme/web', branches: ['main'] },
    { repo: 'GitHub.com/ACME/web', branches: ['release'] },
  ],
  'one repository, branches differing in case': [
    { repo: 'github.com/acme/web', branches: ['main', 'Main'] },
  ],
  'one repository as a string and as {host, owner, name}': [
    { repo: 'github.com/acme/web', branches: ['main'] },
    { repo: { host: 'github.com', owner: 'ACME', name: 'web' }, branches: ['main'] },
  ],
  'one branch listed twice in one target': [
    { repo: 'github.com/acme/web', branches: ['main', 'main'] },
  ],
  'two repositories, one branch name': [
    { repo: 'github.com/acme/web', branches: ['main'] },
    { repo: 'github.com/acme/api', branches: ['main'] },
  ],
};

/** `metrics` settings written by hand: names and globs that match families, none, or only those always kept. */
const METRIC_SELECTIONS: Readonly<Record<string, object>> = {
  'include of a family': { include: ['trunk_merge_queue_state'] },
  'include of a glob': { include: ['trunk_merge_queue_*'] },
  'include of no family': { include: ['trunk_merge_queue_depth_total'] },
  'include of a glob matching nothing': { include: ['trunk_no_such_*'] },
  'exclude of a family': { exclude: ['trunk_merge_queue_state'] },
  'exclude of no family': { exclude: ['trunk_merge_queue_stat'] },
  'exclude of trunk_exporter_target_up': { exclude: ['trunk_exporter_target_up'] },
  'exclude of trunk_exporter_build_info, after a good one': {
    exclude: ['trunk_merge_queue_state', 'trunk_exporter_build_info'],
  },
  'exclude of a glob matching families and one always kept': { exclude: ['trunk_exporter_*'] },
  'exclude of everything': { exclude: ['*'] },
};

const TARGET_AND_SELECTION_CASES = [
  ...Object.entries(TARGET_LISTS).map(([name, targets]) => ({ name, config: { targets } })),
  ...Object.entries(METRIC_SELECTIONS).map(([name, metrics]) => ({
    name,
    config: { metrics, targets: [{ repo: 'github.com/acme/web', branches: ['main'] }] },
  })),
];

describe
  .skipIf(renderer === undefined)
  .concurrent('Helm chart and exporter agree on targets and metrics.include/exclude', () => {
    it.each(TARGET_AND_SELECTION_CASES)('$name', async ({ config }) => {
      const { chart, exporter } = await verdicts(config, { apiKey: false, refusedBy: 'template' });
      expect(chart, exporter.stderr).toBe(exporter.code === 0 ? 'accepts' : 'refuses');
    });
  });

/** A string of exactly `length` characters: `prefix`, then `fill` repeated. */
const ofLength = (length: number, prefix = '', fill = 'b') =>
  prefix + fill.repeat(length - prefix.length);
/** `count` globs with `*` and `plain` names without, as a discovery list. */
const globs = (count: number, plain = 0) => [
  ...Array.from({ length: count }, (_, index) => `team-${index}-*`),
  ...Array.from({ length: plain }, (_, index) => `name-${index}`),
];
const WEB = { repo: 'github.com/acme/web', branches: ['main'] };

/**
 * Settings of 4,097 characters where the chart passes a string through, and of exactly 4,096 (the
 * most a setting may hold, docs/configuration.md); discovery lists of 101 globs with `*`, and of
 * exactly 100 beside names without (the most each list may hold). `refused`: what the exporter
 * does at start, written by hand.
 */
const LIMIT_CASES: readonly { name: string; config: object; refused: boolean }[] = [
  {
    name: 'a branch of 4,097 characters',
    config: { targets: [{ repo: WEB.repo, branches: ['main', ofLength(4097)] }] },
    refused: true,
  },
  {
    name: 'a branch of 4,096 characters',
    config: { targets: [{ repo: WEB.repo, branches: [ofLength(4096)] }] },
    refused: false,
  },
  {
    // Characters as Helm's schema counts them: an emoji outside the Basic Multilingual Plane is one
    // (two UTF-16 code units).
    name: 'a branch of 2,049 emoji (4,098 UTF-16 code units) is 2,049 characters',
    config: { targets: [{ repo: WEB.repo, branches: ['\u{1F680}'.repeat(2049)] }] },
    refused: false,
  },
  {
    name: 'a branch of 4,097 emoji',
    config: { targets: [{ repo: WEB.repo, branches: ['\u{1F680}'.repeat(4097)] }] },
    refused: true,
  },
  {
    name: 'a repo of 4,097 characters',
    config: { targets: [{ ...WEB, repo: ofLength(4097, 'github.com/acme/', 'w') }] },
    refused: true,
  },
  {
    name: 'a repo of 4,096 characters',
    config: { targets: [{ ...WEB, repo: ofLength(4096, 'github.com/acme/', 'w') }] },
    refused: false,
  },
  {
    name: 'a repo name of 4,097 characters in {host, owner, name}',
    config: {
      targets: [{ ...WEB, repo: { host: 'github.com', owner: 'acme', name: ofLength(4097) } }],
    },
    refused: true,
  },
  {
    name: 'an orgUrlSlug of 4,097 characters',
    config: { trunk: { orgUrlSlug: ofLength(4097, '', 'a') }, targets: [WEB] },
    refused: true,
  },
  {
    name: 'an orgUrlSlug of 4,096 characters',
    config: { trunk: { orgUrlSlug: ofLength(4096, '', 'a') }, targets: [WEB] },
    refused: false,
  },
  {
    name: 'an apiUrl of 4,097 characters',
    config: { trunk: { apiUrl: ofLength(4097, 'https://api.trunk.io/', 'p') }, targets: [WEB] },
    refused: true,
  },
  {
    name: 'a metrics.include glob of 4,097 characters',
    config: { metrics: { include: [ofLength(4097, 'trunk_merge_queue_', '*')] }, targets: [WEB] },
    refused: true,
  },
  {
    name: 'a metrics.exclude glob of 4,097 characters',
    config: { metrics: { exclude: [ofLength(4097, 'trunk_merge_queue_', '*')] }, targets: [WEB] },
    refused: true,
  },
  {
    name: 'a discovery.repos glob of 4,097 characters',
    config: { discovery: { enabled: true, repos: [ofLength(4097, 'github.com/acme/')] } },
    refused: true,
  },
  {
    name: 'a discovery.branches glob of 4,096 characters',
    config: { discovery: { enabled: true, branches: [ofLength(4096, 'release-')] } },
    refused: false,
  },
  {
    name: 'discovery.repos of 101 globs with *',
    config: { discovery: { enabled: true, repos: globs(101) } },
    refused: true,
  },
  {
    name: 'discovery.branches of 101 globs with *',
    config: { discovery: { enabled: true, branches: globs(101) } },
    refused: true,
  },
  {
    name: 'discovery.repos and discovery.branches of 100 globs with * and 300 names without',
    config: { discovery: { enabled: true, repos: globs(100, 300), branches: globs(100, 300) } },
    refused: false,
  },
  {
    name: 'discovery.repos of 101 globs with *, discovery off',
    config: { discovery: { enabled: false, repos: globs(101) }, targets: [WEB] },
    refused: true,
  },
];

describe
  .skipIf(renderer === undefined)
  .concurrent('Helm chart and exporter agree on the longest setting and the most globs', () => {
    it.each(LIMIT_CASES)('$name', async ({ config, refused }) => {
      const { chart, exporter } = await verdicts(config, {
        apiKey: true,
        refusedBy: 'schema or template',
      });
      expect(exporter.code, exporter.stderr).toBe(refused ? 2 : 0);
      expect(chart, exporter.stderr).toBe(refused ? 'refuses' : 'accepts');
    });
  });

/**
 * The chart's verdict on `config` given a token (and an API key when `apiKey`), and the exporter's
 * check of the same settings in its own file.
 */
async function verdicts(
  config: object,
  { apiKey, refusedBy }: { apiKey: boolean; refusedBy: 'template' | 'schema or template' },
): Promise<{ chart: string; exporter: FinishedProcess }> {
  const directory = mkdtempSync(join(tmpdir(), 'trunk-exporter-agreement-'));
  const valuesFile = join(directory, 'values.yaml');
  writeFileSync(
    valuesFile,
    stringify({
      config,
      token: { value: 'not-a-real-token' },
      ...(apiKey ? { apiKey: { value: 'trunk_v2_not-a-real-key' } } : {}),
    }),
  );
  writeFileSync(join(directory, 'tokenFile'), 'not-a-real-token');
  writeFileSync(join(directory, 'apiKeyFile'), 'trunk_v2_not-a-real-key');
  const exporterFile = join(directory, 'config.yaml');
  const { trunk, ...rest } = config as { trunk?: object };
  writeFileSync(
    exporterFile,
    stringify({
      trunk: {
        ...trunk,
        tokenFile: join(directory, 'tokenFile'),
        ...(apiKey ? { apiKeyFile: join(directory, 'apiKeyFile') } : {}),
      },
      ...rest,
    }),
  );
  const exporter = await checkConfigInProcess(exporterFile);
  return { chart: await chartVerdict(valuesFile, refusedBy), exporter };
}

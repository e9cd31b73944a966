// examples/compose/ tested with what runs here (no Docker): the compose file's mounts are laid out
// in a temporary directory as the containers would see them; promtool checks that Prometheus
// config, then a real Prometheus runs it against the demo with only the scrape target's address
// changed (compose's service name becomes the demo's loopback address). Grafana's provisioning is
// parsed and checked against the dashboard file it names.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startDemo } from '../../src/demo/demo.js';
import type { RunningExporter } from '../../src/exporter.js';
import { silentLogger } from '../../src/log/logger.js';
import { startPrometheus, type RunningPrometheus } from '../support/prometheus.js';
import { findSystemBinary } from '../support/systemBinary.js';
import { RULE_FILES, ROOT } from './ruleFiles.js';

const COMPOSE_DIRECTORY = join(ROOT, 'examples', 'compose');
const promtool = findSystemBinary('promtool', 'prometheus');
const prometheusBinary = findSystemBinary('prometheus', 'prometheus');

interface ComposeService {
  readonly image?: string;
  readonly build?: { readonly context: string };
  readonly command?: readonly string[];
  readonly ports?: readonly string[];
  readonly volumes?: readonly string[];
  readonly environment?: Readonly<Record<string, string>>;
}
interface ComposeFile {
  readonly services: Readonly<Record<string, ComposeService>>;
}

const compose = parse(
  readFileSync(join(COMPOSE_DIRECTORY, 'docker-compose.yaml'), 'utf8'),
) as ComposeFile;

function service(name: string): ComposeService {
  const found = compose.services[name];
  if (found === undefined) throw new Error(`docker-compose.yaml has no service ${name}`);
  return found;
}

/** A service's bind mounts: container path → host path (resolved as compose does). */
function mounts(name: string): Map<string, string> {
  const result = new Map<string, string>();
  for (const volume of service(name).volumes ?? []) {
    const [source = '', target = ''] = volume.split(':');
    result.set(target, resolve(COMPOSE_DIRECTORY, source));
  }
  return result;
}

/** The file mounted at `containerPath` (a file mount, or a file inside a mounted directory). */
function hostPath(name: string, containerPath: string): string {
  for (const [target, source] of mounts(name)) {
    if (containerPath === target) return source;
    if (containerPath.startsWith(`${target}/`))
      return join(source, containerPath.slice(target.length + 1));
  }
  throw new Error(`${containerPath} is not mounted into ${name}`);
}

/** Copies every mount of `name` into `root` at its container path, so relative paths resolve. */
function layOut(name: string, root: string): void {
  for (const [target, source] of mounts(name)) {
    const destination = join(root, target);
    mkdirSync(dirname(destination), { recursive: true });
    copyFileSync(source, destination);
  }
}

const PROMETHEUS_CONFIG = '/etc/prometheus/prometheus.yml';

describe('examples/compose', () => {
  it('runs the exporter image from this repository in demo mode, and mounts files that exist', () => {
    const exporter = service('trunk-exporter');
    expect(
      existsSync(join(resolve(COMPOSE_DIRECTORY, exporter.build?.context ?? ''), 'Dockerfile')),
    ).toBe(true);
    expect(exporter.command).toEqual(['--demo']);
    expect(exporter.ports).toContain('9740:9740');
    for (const name of Object.keys(compose.services)) {
      for (const [target, source] of mounts(name)) {
        expect(existsSync(source), `${name}: ${source} for ${target}`).toBe(true);
      }
    }
  });

  it("gives Prometheus the project's own rule and alert files", () => {
    const prometheus = service('prometheus');
    expect(prometheus.command).toContain(`--config.file=${PROMETHEUS_CONFIG}`);
    const config = parse(readFileSync(hostPath('prometheus', PROMETHEUS_CONFIG), 'utf8')) as {
      rule_files: string[];
      scrape_configs: { static_configs: { targets: string[] }[] }[];
    };
    const loaded = config.rule_files.map((file) =>
      readFileSync(hostPath('prometheus', join(dirname(PROMETHEUS_CONFIG), file)), 'utf8'),
    );
    expect(loaded.sort()).toEqual(RULE_FILES.map((file) => readFileSync(file, 'utf8')).sort());
    expect(
      config.scrape_configs.flatMap((scrape) => scrape.static_configs.flatMap((c) => c.targets)),
    ).toEqual(['trunk-exporter:9740']);
  });

  it.skipIf(promtool === undefined)('passes promtool check config, rule files included', () => {
    const root = mkdtempSync(join(tmpdir(), 'trunk-exporter-compose-'));
    try {
      layOut('prometheus', root);
      const result = spawnSync(
        promtool ?? 'promtool',
        ['check', 'config', join(root, PROMETHEUS_CONFIG)],
        {
          encoding: 'utf8',
        },
      );
      expect(result.status, result.stdout + result.stderr).toBe(0);
      // One SUCCESS line for the config and one per rule file, with its rule count.
      expect(result.stdout.match(/SUCCESS: \d+ rules found/g)?.length).toBe(RULE_FILES.length);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('provisions Grafana with the Prometheus service as default datasource and the project dashboard', () => {
    const grafana = service('grafana');
    const datasources = parse(
      readFileSync(
        hostPath('grafana', '/etc/grafana/provisioning/datasources/prometheus.yaml'),
        'utf8',
      ),
    ) as { apiVersion: number; datasources: { type: string; url: string; isDefault: boolean }[] };
    expect(datasources.apiVersion).toBe(1);
    expect(datasources.datasources).toHaveLength(1);
    const [datasource] = datasources.datasources;
    expect(datasource?.type).toBe('prometheus');
    expect(datasource?.isDefault).toBe(true);
    const url = new URL(datasource?.url ?? '');
    expect(service(url.hostname).ports).toContain(`${url.port}:${url.port}`);

    const providers = parse(
      readFileSync(
        hostPath('grafana', '/etc/grafana/provisioning/dashboards/trunk-exporter.yaml'),
        'utf8',
      ),
    ) as { apiVersion: number; providers: { type: string; options: { path: string } }[] };
    expect(providers.apiVersion).toBe(1);
    const [provider] = providers.providers;
    expect(provider?.type).toBe('file');
    const dashboardPath = `${provider?.options.path ?? ''}/trunk-merge-queue.json`;
    // The file Grafana loads is the repository's dashboard itself, not a copy.
    expect(hostPath('grafana', dashboardPath)).toBe(
      join(ROOT, 'grafana', 'trunk-merge-queue.json'),
    );
    expect(grafana.environment?.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH).toBe(dashboardPath);
    const dashboard = JSON.parse(readFileSync(hostPath('grafana', dashboardPath), 'utf8')) as {
      uid: string;
      templating: { list: { name: string; type: string; query?: unknown }[] };
    };
    expect(dashboard.uid).toBe('trunk-merge-queue');
    // The dashboard picks its datasource through a variable of the provisioned type.
    expect(
      dashboard.templating.list.find((variable) => variable.name === 'datasource'),
    ).toMatchObject({
      type: 'datasource',
      query: datasource?.type,
    });
  });
});

describe.skipIf(prometheusBinary === undefined)(
  'examples/compose Prometheus against the demo',
  () => {
    let demo: RunningExporter | undefined;
    let prometheus: RunningPrometheus | undefined;
    let root = '';

    beforeAll(async () => {
      demo = await startDemo({
        logger: silentLogger(),
        version: '0.0.0-test',
        port: 0,
        address: '127.0.0.1',
      });
      root = mkdtempSync(join(tmpdir(), 'trunk-exporter-compose-'));
      layOut('prometheus', root);
      const configFile = join(root, PROMETHEUS_CONFIG);
      const config = readFileSync(configFile, 'utf8');
      // The one change: the compose network's name for the exporter becomes the demo's address.
      writeFileSync(
        configFile,
        config.replace("'trunk-exporter:9740'", `'${new URL(demo.url).host}'`),
      );
      prometheus = await startPrometheus({ binary: prometheusBinary ?? 'prometheus', configFile });
    }, 60_000);

    afterAll(async () => {
      await prometheus?.stop();
      await demo?.stop();
      if (root !== '') rmSync(root, { recursive: true, force: true });
    });

    it('scrapes the demo (target up) and evaluates every rule and alert without error', async () => {
      const running = prometheus;
      if (running === undefined) throw new Error('prometheus did not start');
      interface Rules {
        groups: {
          name: string;
          rules: { name: string; health: string; lastError?: string; lastEvaluation: string }[];
        }[];
      }
      const deadline = Date.now() + 45_000;
      let targets: { health: string; scrapeUrl: string }[];
      let rules: Rules;
      for (;;) {
        targets = ((await running.api('/api/v1/targets')) as { activeTargets: typeof targets })
          .activeTargets;
        rules = (await running.api('/api/v1/rules')) as Rules;
        const evaluated = rules.groups.every((group) =>
          group.rules.every((rule) => !rule.lastEvaluation.startsWith('0001-')),
        );
        if (
          (targets.every((target) => target.health === 'up') && targets.length > 0 && evaluated) ||
          Date.now() > deadline
        )
          break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(
        targets.map((target) => target.health),
        running.log(),
      ).toEqual(['up']);
      const all = rules.groups.flatMap((group) => group.rules);
      const expected = RULE_FILES.map(
        (file) => readFileSync(file, 'utf8').match(/^\s+- (alert|record):/gm)?.length ?? 0,
      );
      expect(all.length).toBe(expected.reduce((total, count) => total + count, 0));
      expect(
        all.filter((rule) => rule.health !== 'ok'),
        running.log(),
      ).toEqual([]);
      expect((await running.query('trunk_exporter_target_up == 1')).length).toBe(8);
    }, 60_000);
  },
);

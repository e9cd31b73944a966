// Failure isolation: a family that throws while rendering is left out of that page, counted in
// trunk_exporter_render_errors_total{family} and logged once per distinct error; every other family
// is served, and the family comes back whole once it renders again.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log/logger.js';
import { SNAPSHOT_FAMILIES } from '../../src/metrics/families.js';
import type { FamilyDefinition } from '../../src/metrics/family.js';
import { MetricsPage } from '../../src/metrics/metricsPage.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { RenderErrors } from '../../src/metrics/renderErrors.js';
import { SnapshotFamilies } from '../../src/metrics/snapshotFamilies.js';
import { renderPage } from './page.js';
import {
  acrossRepositories,
  FLAKY_TESTS_INTERVAL_SECONDS,
  loadScenario,
  MERGE_QUEUE_INTERVAL_SECONDS,
  replayScenario,
} from './scenario.js';

const FRAGILE_REPO = 'github.com/acme/repo-1';
/** A line of the fragile families themselves (not of the error counter that names them). */
const FRAGILE_LINE = /^(# (HELP|TYPE) )?test_fragile/m;

function fragileRig() {
  const scenario = acrossRepositories(loadScenario('normal-queue'), 3);
  const replay = replayScenario(scenario);
  const broken = { perTarget: true, acrossTargets: true };
  const fragile: FamilyDefinition[] = [
    {
      name: 'test_fragile',
      help: () => 'Throws for one repository while broken.',
      type: 'gauge',
      labelNames: ['repo', 'branch', 'kind'],
      scope: 'target',
      samples: ({ target }) => {
        if (broken.perTarget && target.repo === FRAGILE_REPO) throw new Error('fragile broke');
        return [{ labels: [target.repo, target.branch, target.kind], value: 1 }];
      },
    },
    {
      name: 'test_fragile_targets',
      help: () => 'Throws while broken.',
      type: 'gauge',
      labelNames: [],
      scope: 'targets',
      samples: (statuses) => {
        if (broken.acrossTargets) throw new Error('summary broke');
        return [{ labels: [], value: statuses.length }];
      },
    },
  ];
  const lines: string[] = [];
  const logger = createLogger({
    level: 'error',
    secrets: () => [],
    destination: new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    }),
  });
  const registry = createRegistry({ defaultMetrics: false });
  const families = new SnapshotFamilies({
    settings: {
      mergeQueueIntervalSeconds: MERGE_QUEUE_INTERVAL_SECONDS,
      flakyTestsIntervalSeconds: FLAKY_TESTS_INTERVAL_SECONDS,
      topCodeowners: scenario.topCodeowners,
      version: 'test',
    },
    selection: {},
    renderErrors: new RenderErrors(registry, logger),
    definitions: [...SNAPSHOT_FAMILIES.slice(0, 3), ...fragile, ...SNAPSHOT_FAMILIES.slice(3)],
  });
  const page = new MetricsPage({
    registry,
    store: replay.store,
    snapshotMetrics: families,
  });
  /** A store change that leaves every target's status as it was. */
  const touchStore = (): void => {
    replay.store.setTargets(scenario.targets);
  };
  return { page, broken, lines, touchStore };
}

describe('render errors', () => {
  it.each(['prometheus', 'openmetrics'] as const)(
    'leave the failing families out, serve the rest, count each failure and log it once (%s)',
    async (format) => {
      const { page, lines, touchStore } = fragileRig();
      const first = await renderPage(page, format);
      expect(first).not.toMatch(FRAGILE_LINE);
      expect(first).toContain('trunk_merge_queue_concurrency{repo="github.com/acme/repo-1"');
      expect(first).toContain('trunk_exporter_target_up{repo="github.com/acme/repo-2"');

      touchStore();
      const second = await renderPage(page, format, { gzip: true });
      expect(second).not.toMatch(FRAGILE_LINE);
      expect(second).toContain('trunk_exporter_render_errors_total{family="test_fragile"} 2');
      expect(second).toContain(
        'trunk_exporter_render_errors_total{family="test_fragile_targets"} 2',
      );
      // A Writable takes a line written while it handles the previous one on a later turn.
      await new Promise((resolve) => setImmediate(resolve));
      expect(lines.filter((line) => line.includes('fragile broke'))).toHaveLength(1);
      expect(lines.filter((line) => line.includes('summary broke'))).toHaveLength(1);
      expect(lines.join('')).toContain('"family":"test_fragile"');
    },
  );

  it('bring a family back whole, for every target, once it renders again', async () => {
    const { page, broken, touchStore } = fragileRig();
    await renderPage(page);
    broken.perTarget = false;
    broken.acrossTargets = false;
    touchStore();
    const healed = await renderPage(page);
    const fragileLines = healed.split('\n').filter((line) => line.startsWith('test_fragile{'));
    // Three repositories, each a merge queue and a quarantine list.
    expect(fragileLines).toHaveLength(6);
    expect(healed).toContain('test_fragile{repo="github.com/acme/repo-1",branch="main"');
    expect(healed).toContain('test_fragile_targets 6');
    expect(healed).toContain('# TYPE test_fragile gauge');
  });
});

// metrics.include / metrics.exclude: families are dropped before anything is rendered, the
// self-health families stay, unknown names are errors that list the near ones (--check-config),
// and a reload applies a new selection at once.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SNAPSHOT_FAMILIES, UNSELECTABLE_FAMILIES } from '../../src/metrics/families.js';
import type {
  AcrossTargetsFamily,
  FamilyDefinition,
  PerTargetFamily,
} from '../../src/metrics/family.js';
import { MetricsPage } from '../../src/metrics/metricsPage.js';
import { selectFamilies, selectionProblems } from '../../src/metrics/selection.js';
import { SnapshotFamilies } from '../../src/metrics/snapshotFamilies.js';
import { REPOSITORY_ROOT, runNode } from '../support/nodeProcess.js';
import { renderPage } from './page.js';
import {
  FLAKY_TESTS_INTERVAL_SECONDS,
  loadScenario,
  MERGE_QUEUE_INTERVAL_SECONDS,
  replayScenario,
} from './scenario.js';

const NAMES = SNAPSHOT_FAMILIES.map(({ name }) => name);

function selectedNames(include: string[] | undefined, exclude: string[]): string[] {
  return selectFamilies(SNAPSHOT_FAMILIES, { include, exclude }, UNSELECTABLE_FAMILIES).map(
    ({ name }) => name,
  );
}

/** Family names on a page (from its TYPE lines). */
function familiesOn(page: string): string[] {
  return [...page.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1] ?? '');
}

describe('selectFamilies', () => {
  it('keeps every family by default, in page order', () => {
    expect(selectedNames(undefined, [])).toEqual(NAMES);
  });

  it('drops what exclude matches, by name or * glob, but never the self-health families', () => {
    const kept = selectedNames(undefined, [
      'trunk_merge_queue_*',
      'trunk_flaky_tests_quarantined',
      'trunk_exporter_*',
    ]);
    expect(kept).toEqual([
      'trunk_flaky_tests_quarantined_by_codeowner',
      'trunk_flaky_tests_oldest_quarantine_timestamp_seconds',
      'trunk_flaky_tests_quarantined_recently',
      'trunk_flaky_tests_quarantined_older_than',
      'trunk_flaky_tests_unhealthy',
      'trunk_flaky_tests_unhealthy_by_codeowner',
      'trunk_flaky_tests_oldest_unhealthy_timestamp_seconds',
      'trunk_flaky_tests_unhealthy_recently',
      'trunk_flaky_tests_failed_runs',
      'trunk_flaky_tests_runs',
      'trunk_flaky_tests_pull_requests_impacted',
      'trunk_test_collection_test_cases',
      'trunk_test_collection_quarantine_enabled',
      'trunk_flaky_tests_status_changes_total',
      'trunk_flaky_tests_quarantine_setting_changes_total',
      'trunk_flaky_tests_monitor_events_total',
      'trunk_flaky_tests_investigations_completed_total',
      'trunk_exporter_target_up',
      'trunk_exporter_build_info',
    ]);
  });

  it('keeps only what include matches (and the self-health families), less what exclude drops', () => {
    expect(selectedNames(['trunk_flaky_tests_*'], ['*_older_than'])).toEqual([
      'trunk_flaky_tests_quarantined',
      'trunk_flaky_tests_quarantined_by_codeowner',
      'trunk_flaky_tests_oldest_quarantine_timestamp_seconds',
      'trunk_flaky_tests_quarantined_recently',
      'trunk_flaky_tests_unhealthy',
      'trunk_flaky_tests_unhealthy_by_codeowner',
      'trunk_flaky_tests_oldest_unhealthy_timestamp_seconds',
      'trunk_flaky_tests_unhealthy_recently',
      'trunk_flaky_tests_failed_runs',
      'trunk_flaky_tests_runs',
      'trunk_flaky_tests_pull_requests_impacted',
      'trunk_flaky_tests_status_changes_total',
      'trunk_flaky_tests_quarantine_setting_changes_total',
      'trunk_flaky_tests_monitor_events_total',
      'trunk_flaky_tests_investigations_completed_total',
      'trunk_exporter_target_up',
      'trunk_exporter_build_info',
    ]);
  });

  it('reads a glob literally apart from *', () => {
    expect(selectedNames(undefined, ['trunk.merge.queue.*'])).toEqual(NAMES);
  });
});

describe('selectionProblems', () => {
  it('names each entry that matches nothing, with the nearest families', () => {
    expect(
      selectionProblems(
        NAMES,
        { include: ['trunk_merge_queue_*'], exclude: ['trunk_merge_queue_pull_request', 'nope_*'] },
        UNSELECTABLE_FAMILIES,
      ),
    ).toEqual([
      {
        path: 'metrics.exclude[0]',
        message:
          '"trunk_merge_queue_pull_request" matches no metric family; did you mean ' +
          '"trunk_merge_queue_pull_requests", "trunk_merge_queue_pull_requests_blocked"?',
      },
      { path: 'metrics.exclude[1]', message: '"nope_*" matches no metric family' },
    ]);
  });

  it('refuses to exclude only the self-health families', () => {
    expect(
      selectionProblems(NAMES, { exclude: ['trunk_exporter_target_up'] }, UNSELECTABLE_FAMILIES),
    ).toEqual([
      {
        path: 'metrics.exclude[0]',
        message:
          '"trunk_exporter_target_up" cannot be excluded: trunk_exporter_target_up always stay on the page',
      },
    ]);
    // A glob that also matches other families is fine: it drops those.
    expect(
      selectionProblems(NAMES, { exclude: ['trunk_exporter_*'] }, UNSELECTABLE_FAMILIES),
    ).toEqual([]);
  });
});

describe('the selection on the page', () => {
  it('drops excluded families from rendering altogether, and a reload applies a new selection', async () => {
    const replay = replayScenario(loadScenario('normal-queue'));
    const calls = new Map<string, number>();
    const counted = SNAPSHOT_FAMILIES.map((definition): FamilyDefinition => {
      const count = (): void => {
        calls.set(definition.name, (calls.get(definition.name) ?? 0) + 1);
      };
      if (definition.scope === 'target') {
        const samples: PerTargetFamily['samples'] = (status, settings) => {
          count();
          return definition.samples(status, settings);
        };
        return { ...definition, samples };
      }
      const samples: AcrossTargetsFamily['samples'] = (statuses, settings) => {
        count();
        return definition.samples(statuses, settings);
      };
      return { ...definition, samples };
    });
    const settings = {
      mergeQueueIntervalSeconds: MERGE_QUEUE_INTERVAL_SECONDS,
      flakyTestsIntervalSeconds: FLAKY_TESTS_INTERVAL_SECONDS,
      topCodeowners: 20,
      version: 'test',
    };
    const families = new SnapshotFamilies({
      settings,
      selection: { exclude: ['trunk_merge_queue_*', 'trunk_exporter_*'] },
      definitions: counted,
    });
    const page = new MetricsPage({
      registry: replay.registry,
      store: replay.store,
      snapshotMetrics: families,
    });

    const excluded = familiesOn(await renderPage(page));
    expect(excluded.filter((name) => name.startsWith('trunk_merge_queue'))).toEqual([]);
    expect(excluded).toContain('trunk_flaky_tests_quarantined');
    expect(excluded).toContain('trunk_exporter_target_up');
    expect(excluded).toContain('trunk_exporter_build_info');
    expect(excluded).not.toContain('trunk_exporter_last_success_timestamp_seconds');
    expect(excluded).toContain('trunk_exporter_api_requests_total');
    for (const name of calls.keys()) expect(name).not.toMatch(/^trunk_merge_queue_/);
    expect(calls.get('trunk_exporter_target_up')).toBeGreaterThan(0);

    // A reload: no store change, yet the next scrape shows the new selection.
    families.apply(settings, { include: ['trunk_merge_queue_state'] });
    const included = familiesOn(await renderPage(page, 'openmetrics', { gzip: true }));
    expect(included.filter((name) => name.startsWith('trunk_'))).toEqual([
      'trunk_merge_queue_state',
      'trunk_exporter_target_up',
      'trunk_exporter_build',
      'trunk_exporter_api_requests',
      'trunk_exporter_api_request_duration_seconds',
      'trunk_exporter_api_schema_mismatches',
      'trunk_exporter_api_anomalies',
    ]);
  });

  it('--check-config reports every unknown name with the near ones and its line, and exits 2', async () => {
    const path = join(
      import.meta.dirname,
      'fixtures',
      'config',
      'metrics-selection-unknown-names.yaml',
    );
    const result = await runNode([
      join(REPOSITORY_ROOT, 'bin', 'trunk-exporter.js'),
      '--check-config',
      '--config',
      path,
    ]);
    expect(result.stderr.trim().split('\n')).toEqual([
      `${path}: metrics.exclude[0]: "trunk_merge_queue_pull_request" matches no metric family; did you mean "trunk_merge_queue_pull_requests", "trunk_merge_queue_pull_requests_blocked"? (line 13)`,
      `${path}: metrics.exclude[2]: "trunk_exporter_build_info" cannot be excluded: trunk_exporter_build_info always stay on the page (line 15)`,
    ]);
    expect(result.code).toBe(2);
  });
});

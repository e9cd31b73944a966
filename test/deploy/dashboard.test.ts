// The Grafana dashboard against a real Prometheus: Prometheus scrapes an exporter polling the
// simulator every second and loads prometheus/alerts.yaml and prometheus/rules.yaml; then every
// panel query runs, with its template variables filled in as Grafana would, and must be valid and
// return data. Adding a panel to the JSON adds it to this test.
//
// The flow panels need events: transitions (restarts among them) and time-in-state series exist
// only once a poll has seen one. At the real pace a queue sees a merge or two a minute, so the
// simulated world runs 60 times faster than the wall clock, starting two hours behind it: within
// the test's seconds the queues merge, fail and restart, and every simulated timestamp stays in
// the past (ages stay positive). No panel query falls back to a constant to look non-empty.
//
// The exporter has webhooks on, and the test posts signed events to it (failed PRs with a reason,
// for a queue it polls), so the Webhooks row has data; exits by source come from its polls.
import { randomUUID } from 'node:crypto';
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SIMULATED_REPOSITORIES, repositoryKey } from '../../src/simulator/repositories.js';
import { createSimulatorWorld } from '../../src/simulator/world.js';
import { SIMULATOR_TOKEN, configYaml, startTestExporter } from '../support/exporterHarness.js';
import { startTestSimulator } from '../support/simulator.js';
import { findSystemBinary } from '../support/systemBinary.js';
import {
  allValuesRegex,
  dataPanelTitles,
  labelValuesQuery,
  panelQueries,
  readDashboard,
  substituteVariables,
  type PanelQuery,
} from './dashboardQueries.js';
import { startPrometheus, type RunningPrometheus } from '../support/prometheus.js';
import { RULE_FILES, readYamlFile, type RuleFile } from './ruleFiles.js';

const prometheusBinary = findSystemBinary('prometheus', 'prometheus');
const dashboard = readDashboard();
const queries = panelQueries(dashboard);

/** Simulated seconds per wall-clock second, and how far the simulated clock starts behind. */
const WORLD_SPEED = 60;
const WORLD_BEHIND_SECONDS = 2 * 3600;

/**
 * The quantile panels, by the histogram count each reads: an hour without an observation shows
 * nothing (histogram_quantile of none is NaN), as the recording rules record nothing then. The
 * test's world may end no testing attempt in its minute: such a panel may be empty, but only while
 * its count stands still.
 */
const QUANTILE_PANEL_COUNTS: Readonly<Record<string, string>> = {
  'Testing duration, p90 (last hour)': 'trunk_merge_queue_testing_duration_seconds_count',
  'Batch size (last hour)': 'trunk_merge_queue_batch_size_count',
  'Run duration, p90 (last hour)': 'trunk_merge_queue_verification_run_duration_seconds_count',
};

/** The API v2 key the exporter reads the simulator with. */
const API_KEY = 'trunk_v2_dashboard-test-key';

/** The exporter's webhook signing secret, and the path it receives events on (the default). */
const SIGNING_SECRET = 'whsec_ZGFzaGJvYXJkLXRlc3Qtc2lnbmluZy1zZWNyZXQ=';
const WEBHOOK_PATH = '/webhooks/trunk';

/** Grafana's built-in interval variables, for a 1 s scrape interval. */
const BUILT_IN_VARIABLES = { __interval: '1s', __rate_interval: '5s', __range: '60s' };

interface QueryResult {
  readonly result: readonly unknown[];
}
interface RulesAnswer {
  readonly groups: readonly {
    readonly name: string;
    readonly rules: readonly { name: string; health: string; lastError?: string }[];
  }[];
}

describe('Grafana dashboard', () => {
  it('has datasource, repo and branch variables, and every panel follows $datasource', () => {
    expect(dashboard.templating.list.map((variable) => variable.name)).toEqual([
      'datasource',
      'repo',
      'branch',
    ]);
    expect(dataPanelTitles(dashboard).length).toBeGreaterThanOrEqual(12);
    for (const query of queries) {
      expect(query.panelDataSource?.uid, query.panel).toBe('${datasource}');
      expect(query.dataSource?.uid, `${query.panel} ${query.refId}`).toBe('${datasource}');
    }
  });

  it('shows each required subject in some panel', () => {
    const all = queries.map((query) => query.expr).join('\n');
    for (const metric of [
      'trunk_merge_queue_state',
      'trunk_merge_queue_pull_requests',
      'oldest_state_change',
      'trunk_merge_queue_pull_requests_blocked',
      'trunk_merge_queue_testing_timeout_seconds',
      'trunk_flaky_tests_quarantined',
      'trunk_flaky_tests_quarantined_by_codeowner',
      'trunk_exporter_target_up',
      'trunk_exporter_api_requests',
      'trunk_exporter_api_request_duration_seconds',
      'trunk_exporter_api_schema_mismatches_total',
      'trunk_merge_queue_pull_requests_exited',
      'trunk_merge_queue_pull_requests_failed:ratio1h',
      'trunk_merge_queue_time_in_queue_seconds',
      'trunk_merge_queue_restarts_per_merge',
      'trunk_merge_queue_state_seconds',
      'trunk_merge_queue_time_in_state_seconds',
      'trunk_flaky_tests_quarantined_recently',
      'trunk_flaky_tests_quarantined_older_than',
      'trunk_merge_queue_webhook_events_total',
      'trunk_merge_queue_pull_requests_failed_total',
      'trunk_merge_queue_pull_request_exits_by_source_total',
      'trunk_exporter_webhook_requests_total',
      'trunk_merge_queue_testing_duration_seconds_count',
      'trunk_merge_queue_testing_duration_seconds_sum',
      'trunk_merge_queue_testing_attempts_per_merge',
      'trunk_merge_queue_testing_hours_per_merge',
      'trunk_merge_queue_bisections_started_total',
      'trunk_merge_queue_oldest_pull_request_number',
      'trunk_merge_queue_last_merge_timestamp_seconds',
      'trunk_flaky_tests_unhealthy',
      'trunk_flaky_tests_unhealthy_by_codeowner',
      'trunk_flaky_tests_oldest_unhealthy_timestamp_seconds',
      'trunk_flaky_tests_unhealthy_recently',
      'trunk_merge_queue_pull_requests_cancelled_total',
      'trunk_merge_queue_restarts_total',
      'trunk_merge_queue_check_failures:ratio1d',
      'trunk_merge_queue_restarts_per_merge:ratio1d',
      'trunk_merge_queue_batch_size',
      'trunk_merge_queue_verification_runs_in_progress',
      'trunk_merge_queue_concurrency',
      'trunk_merge_queue_verification_run_duration_seconds',
      'trunk_flaky_tests_failed_runs',
      'trunk_flaky_tests_pull_requests_impacted',
    ]) {
      expect(all).toContain(metric);
    }
  });
});

describe.skipIf(prometheusBinary === undefined)('Grafana dashboard on a real Prometheus', () => {
  let prometheus: RunningPrometheus;
  let webhookUrl: string;
  const startedAt = Date.now() / 1000;

  /** Posts a `pull_request.failed` event for the first simulated queue, signed as Svix signs it. */
  async function postFailedPullRequest(prNumber: number): Promise<void> {
    const [repository] = DEFAULT_SIMULATED_REPOSITORIES;
    if (repository === undefined) throw new Error('no simulated repository');
    const body = JSON.stringify({
      type: 'pull_request.failed',
      pr_number: prNumber,
      repository: { host: repository.host, owner: repository.owner, name: repository.name },
      target_branch: repository.branches[0],
      failure_reason: 'test_failures',
      batched: false,
      timestamp: new Date().toISOString(),
    });
    const id = `msg_${randomUUID()}`;
    const timestamp = new Date();
    const signature = new Webhook(SIGNING_SECRET).sign(id, timestamp, body);
    const response = await fetch(webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'svix-id': id,
        'svix-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
        'svix-signature': signature,
      },
      body,
    });
    if (response.status !== 204) throw new Error(`webhook answered ${response.status}`);
  }

  beforeAll(async () => {
    const { simulator } = await startTestSimulator({
      token: SIMULATOR_TOKEN,
      apiKey: API_KEY,
      world: createSimulatorWorld({ seed: 3, startTime: Date.now() / 1000 - WORLD_BEHIND_SECONDS }),
      autoAdvance: { tickMs: 1000, secondsPerTick: WORLD_SPEED },
    });
    // Through API v2, so that its families (testing attempts, flaky and broken tests) have data;
    // the repository without a merge queue lists no branch.
    const targets = DEFAULT_SIMULATED_REPOSITORIES.map(
      (repository) =>
        `  - repo: ${repositoryKey(repository)}\n` +
        (repository.branches.length > 0
          ? `    branches: [${repository.branches.join(', ')}]\n`
          : '') +
        '    flakyTests: true',
    ).join('\n');
    const exporter = await startTestExporter(
      `${configYaml({
        apiUrl: simulator.origin,
        token: null,
        apiKey: API_KEY,
        targets,
        polling: '  mergeQueueIntervalSeconds: 1\n  flakyTestsIntervalSeconds: 2',
      })}\nwebhooks:\n  enabled: true\n  signingSecret: ${SIGNING_SECRET}`,
    );
    webhookUrl = `${exporter.exporter.url}${WEBHOOK_PATH}`;
    prometheus = await startPrometheus({
      binary: prometheusBinary ?? 'prometheus',
      scrapeTarget: new URL(exporter.exporter.url).host,
      ruleFiles: RULE_FILES,
    });
  });

  afterAll(async () => {
    await prometheus.stop();
  });

  /** Runs one panel query as Grafana would (range or instant); resolves to its series count. */
  async function run(query: PanelQuery, variables: Record<string, string>): Promise<number> {
    const expr = encodeURIComponent(substituteVariables(query.expr, variables));
    const now = Date.now() / 1000;
    const path = query.instant
      ? `/api/v1/query?query=${expr}&time=${now}`
      : `/api/v1/query_range?query=${expr}&start=${startedAt}&end=${now}&step=1`;
    const data = (await prometheus.api(path)) as QueryResult;
    return data.result.length;
  }

  /** Values of the dashboard's query variables, in order, each from Prometheus like Grafana does. */
  async function variableValues(): Promise<Record<string, string>> {
    const values: Record<string, string> = { ...BUILT_IN_VARIABLES };
    for (const variable of dashboard.templating.list) {
      if (variable.type !== 'query') continue;
      const { selector, label } = labelValuesQuery(variable);
      const match = encodeURIComponent(substituteVariables(selector, values));
      const found = (await prometheus.api(
        `/api/v1/label/${label}/values?match[]=${match}`,
      )) as string[];
      if (found.length === 0) throw new Error(`variable ${variable.name} has no values yet`);
      values[variable.name] = allValuesRegex(found);
    }
    return values;
  }

  /** Every panel query that is still invalid or empty, with why. */
  async function failingQueries(): Promise<string[]> {
    let variables: Record<string, string>;
    try {
      variables = await variableValues();
    } catch (error) {
      return [String(error)];
    }
    const failures: string[] = [];
    for (const query of queries) {
      const where = `panel "${query.panel}" query ${query.refId}`;
      try {
        if ((await run(query, variables)) > 0) continue;
        const count = QUANTILE_PANEL_COUNTS[query.panel];
        const observed =
          count === undefined ||
          (await run({ ...query, expr: `increase(${count}[1h]) > 0` }, variables)) > 0;
        if (observed) failures.push(`${where}: no data`);
      } catch (error) {
        failures.push(`${where}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    return failures;
  }

  it('runs every panel query with data, and loads the alerting and recording rules', async () => {
    // Data arrives over a few seconds (first polls, two scrapes for rate(), rule evaluations); the
    // first restarts take up to half a minute.
    const deadline = Date.now() + 60_000;
    let prNumber = 90_000;
    await postFailedPullRequest((prNumber += 1));
    let failures = await failingQueries();
    while (failures.length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await postFailedPullRequest((prNumber += 1));
      failures = await failingQueries();
    }
    expect(failures, prometheus.log()).toEqual([]);

    const expectedGroups = RULE_FILES.flatMap((file) =>
      (readYamlFile(file) as RuleFile).groups.map((group) => group.name),
    );
    const rules = (await prometheus.api('/api/v1/rules')) as RulesAnswer;
    expect(rules.groups.map((group) => group.name).sort()).toEqual(expectedGroups.sort());
    for (const rule of rules.groups.flatMap((group) => group.rules)) {
      expect({ rule: rule.name, health: rule.health, lastError: rule.lastError ?? '' }).toEqual({
        rule: rule.name,
        health: 'ok',
        lastError: '',
      });
    }
  }, 90_000);
});

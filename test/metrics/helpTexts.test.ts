// Every family's HELP is true on both APIs: one that names a call of one API names the other's
// too, or says it is that API's only. Checked on the families the engine renders, and on every
// family of a real exporter's page (prom-client's included), with both credentials, discovery and
// webhooks on.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerApiMetrics } from '../../src/metrics/apiMetrics.js';
import { SNAPSHOT_FAMILIES } from '../../src/metrics/families.js';
import { ENDPOINTS } from '../../src/trunk/schemas.js';
import { ATTEMPT_FAILURE_REASONS } from '../../src/trunk/transport.js';
import { configYaml, startTestExporter } from '../support/exporterHarness.js';
import { startTestSimulator } from '../support/simulator.js';
import { WEBHOOK_SECRET } from '../support/webhooks.js';

const SETTINGS = {
  mergeQueueIntervalSeconds: 30,
  flakyTestsIntervalSeconds: 300,
  topCodeowners: 20,
  version: '0.0.0-test',
};
const V1_CALLS = Object.values(ENDPOINTS);
const V2_CALL = /GET \/v2\//;
const TOKEN = 'sim-token-help';
const API_KEY = 'trunk_v2_help-texts';

/** Every family's name and HELP: the engine's, and those of a real exporter's page. */
async function helpTexts(): Promise<[string, string][]> {
  const texts = new Map(SNAPSHOT_FAMILIES.map((family) => [family.name, family.help(SETTINGS)]));
  const { simulator } = await startTestSimulator({ seed: 3, token: TOKEN, apiKey: API_KEY });
  const yaml = configYaml({
    apiUrl: simulator.origin,
    token: TOKEN,
    apiKey: API_KEY,
    targets: '  - repo: github.com/acme/web\n    branches: [main]\n    flakyTests: true',
  }).replace('targets:\n', 'discovery:\n  enabled: true\ntargets:\n');
  const exporter = await startTestExporter(
    `${yaml}\nwebhooks:\n  enabled: true\n  signingSecret: ${WEBHOOK_SECRET}`,
  );
  await exporter.waitUntilReady();
  for (const line of (await exporter.scrape()).split('\n')) {
    const help = /^# HELP (\S+) (.*)$/.exec(line);
    if (help !== null && !texts.has(help[1] ?? '')) texts.set(help[1] ?? '', help[2] ?? '');
  }
  return [...texts];
}

describe('HELP texts on both APIs', () => {
  it('name both APIs’ calls, or say which API alone feeds the family', async () => {
    const texts = await helpTexts();
    const names = texts.map(([name]) => name);
    expect(names).toContain('trunk_exporter_discovered_targets');
    expect(names).toContain('trunk_exporter_api_requests_total');
    for (const [name, help] of texts) {
      const v1 = V1_CALLS.some((call) => help.includes(call));
      const v2 = V2_CALL.test(help);
      if (v1 && !v2) expect(help, name).toContain('API v1 only');
      if (v2 && !v1) expect(help, name).toContain('API v2 only');
      // A v1 call is said to be v1's: read bare on a queue fed by v2, it would mislead.
      if (v1) expect(help, name).toMatch(/\(API v1\)|on API v1|API v1 only/);
    }
  });

  it('name the list of pull requests for every family read from the pull requests', () => {
    // Trunk's definition: a queue's pull requests, their queue entries' state and stateChangedAt
    // and their readiness are rows of GET /v2/merge-queues/{id}/pull-requests; the list of
    // queues carries each queue's state and settings only.
    const fromPullRequests = [
      'trunk_merge_queue_pull_requests',
      'trunk_merge_queue_oldest_state_change_timestamp_seconds',
      'trunk_merge_queue_oldest_pull_request_number',
      'trunk_merge_queue_pull_requests_blocked',
      'trunk_merge_queue_pull_requests_not_mergeable',
    ];
    for (const name of fromPullRequests) {
      const help = SNAPSHOT_FAMILIES.find((family) => family.name === name)?.help(SETTINGS) ?? '';
      expect(help, name).toContain('GET /v2/merge-queues/{id}/pull-requests (API v2)');
      expect(help, name).not.toContain('GET /v2/merge-queues (API v2)');
    }
  });

  it('of trunk_exporter_api_requests_total name every code an attempt without a status gets', async () => {
    const registry = new Registry();
    registerApiMetrics(registry);
    const { help } = (await registry.getMetricsAsJSON()).find(
      (metric) => metric.name === 'trunk_exporter_api_requests_total',
    ) ?? { help: '' };
    for (const reason of ATTEMPT_FAILURE_REASONS) expect(help).toContain(reason);
  });
});

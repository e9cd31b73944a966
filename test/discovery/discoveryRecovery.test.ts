// Discovery through a real exporter on loopback: discovery.repos globs match a repository however
// Trunk cases its name.
import { afterEach, describe, expect, it } from 'vitest';
import { select, type Sample } from '../support/exposition.js';
import { configYaml, startTestExporter } from '../support/exporterHarness.js';
import { pageAt, startFakeV2 } from '../support/fakeTrunkV2.js';
import { cleanUp } from '../trunk/harness.js';

afterEach(cleanUp);

const API_KEY = 'trunk_v2_discovery-recovery';

/** A key-only configuration with discovery on (read every 300 s, so only its first read counts). */
function discoveryYaml(
  apiUrl: string,
  options: { targets?: string; discovery?: string; apiKey?: string; polling?: string } = {},
): string {
  return configYaml({
    apiUrl,
    token: null,
    apiKey: options.apiKey ?? API_KEY,
    targets: options.targets ?? '  []',
    polling:
      options.polling ?? '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
  }).replace(
    'targets:\n',
    `discovery:\n  enabled: true\n  intervalSeconds: 300\n${options.discovery ?? ''}targets:\n`,
  );
}

const queuesOnThePage = (samples: readonly Sample[]) =>
  select(samples, 'trunk_merge_queue_state', { state: 'running' })
    .map((sample) => `${sample.labels.repo} ${sample.labels.branch}`)
    .sort();

describe('discovery', () => {
  it('matches discovery.repos globs without regard to letter case, as repositories are compared', async () => {
    // The organization's queues: github.com/Acme/Web main, github.com/acme/api main and release.
    const fake = await startFakeV2({ queues: pageAt('merge-queues-of-an-organization.json') });
    const exporter = await startTestExporter(
      discoveryYaml(fake.origin, {
        discovery: "  repos: ['github.com/acme/*']\n  branches: [main]\n  flakyTests: false\n",
      }),
    );
    const samples = await exporter.waitFor(
      (current) => queuesOnThePage(current).length === 2,
      'the two main branches',
    );
    expect(queuesOnThePage(samples)).toEqual([
      'github.com/Acme/Web main',
      'github.com/acme/api main',
    ]);
  });
});

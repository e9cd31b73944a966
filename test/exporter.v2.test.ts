// End to end with API v2: an exporter holding only an API key, and one holding only the v1 token,
// poll the same frozen simulator world; their pages must carry the same families with the same
// labels and values (the golden comparison of issue 26), and the v2 one must only ever GET.
import { describe, expect, it } from 'vitest';
import type { Sample } from './support/exposition.js';
import {
  configYaml,
  startTestExporter,
  type ExporterUnderTest,
} from './support/exporterHarness.js';
import { startTestSimulator } from './support/simulator.js';

const API_KEY = 'trunk_v2_e2e-key-31f';
const TOKEN = 'sim-token-4b1d';

const TARGETS = [
  '  - repo: github.com/acme/web',
  '    branches: [main, release]',
  '    flakyTests: true',
  '  - repo: github.com/acme/api',
  '    branches: [main]',
  '    flakyTests: true',
  '  - repo: { host: github.com, owner: acme, name: mobile }',
  '    branches: [develop]',
].join('\n');

/** Families that say the same whichever API fed them (self-health and API counters differ by design). */
const SHARED_FAMILY = /^trunk_(merge_queue|flaky_tests)_/;
/** A family only API v2 can fill (documented in docs/metrics.md): the v2 page has its series. */
const V2_ONLY_FAMILY = 'trunk_merge_queue_pull_requests_not_mergeable';
/** The samples of every family only API v2 can fill, left out of the comparison. */
const V2_ONLY_SAMPLES =
  /^trunk_(merge_queue_(pull_requests_not_mergeable|(testing_duration_seconds|verification_run_duration_seconds|batch_size)_(bucket|sum|count)|bisections_started_total|verification_runs_total|verification_runs_in_progress|check_failures_total)|flaky_tests_(unhealthy|unhealthy_by_codeowner|oldest_unhealthy_timestamp_seconds|unhealthy_recently|failed_runs|runs|pull_requests_impacted)|test_collection_(test_cases|quarantine_enabled))$/;

/** Series only API v1 can fill: v2's list rows cannot tell missing impacted targets. */
function v1Only(sample: Sample): boolean {
  return (
    sample.name === 'trunk_merge_queue_pull_requests_blocked' &&
    sample.labels.reason === 'impacted_targets_missing'
  );
}
/** Known at start through API v2 only (v1 learns it from the first merge it sees). */
const V2_AT_START_FAMILY = 'trunk_merge_queue_last_merge_timestamp_seconds';

function shared(samples: readonly Sample[]): string[] {
  return samples
    .filter(
      (sample) =>
        SHARED_FAMILY.test(sample.name) &&
        !V2_ONLY_SAMPLES.test(sample.name) &&
        !v1Only(sample) &&
        sample.name !== V2_AT_START_FAMILY,
    )
    .map((sample) => `${sample.name}${JSON.stringify(sample.labels)} ${sample.value}`)
    .sort();
}

/**
 * The v1 page as API v2 tells it where their answers differ by design: a queue entry v2 lists
 * without a `priorityName` counts as `priority="unknown"` (the definition: "some entries carry a
 * value the queue never named … do not infer one from the presence of the other"), where v1, which
 * requires the name, names it. The entries are read from the simulator's v2 answers themselves.
 */
async function asV2Tells(v1Samples: readonly Sample[], origin: string): Promise<Sample[]> {
  const get = async (path: string): Promise<{ data: Record<string, unknown>[] }> => {
    const response = await fetch(`${origin}/v2/${path}`, {
      headers: { Authorization: `Bearer ${API_KEY}` },
    });
    return (await response.json()) as { data: Record<string, unknown>[] };
  };
  const samples = v1Samples.map((sample) => ({ ...sample, labels: { ...sample.labels } }));
  const queues = await get('merge-queues?limit=100');
  for (const queue of queues.data) {
    const repo = String(queue.repositoryUrl).replace(/^https:\/\//, '');
    const branch = String(queue.targetBranch);
    const rows = await get(
      `merge-queues/${String(queue.id)}/pull-requests?limit=100&state=notReady,pending,testing,testsPassed,pendingFailure`,
    );
    for (const row of rows.data) {
      const entry = row.queueEntry as { state: string; priorityName?: string };
      if (entry.priorityName !== undefined) continue;
      const state = entry.state.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
      const labels = { repo, branch, state };
      const named = samples.find(
        (sample) =>
          sample.name === 'trunk_merge_queue_pull_requests' &&
          Object.entries(labels).every(([key, value]) => sample.labels[key] === value) &&
          sample.labels.priority !== 'unknown' &&
          sample.value > 0,
      );
      if (named === undefined) throw new Error(`no v1 series for ${JSON.stringify(labels)}`);
      named.value -= 1;
      const unknown = samples.find(
        (sample) =>
          sample.name === 'trunk_merge_queue_pull_requests' &&
          Object.entries(labels).every(([key, value]) => sample.labels[key] === value) &&
          sample.labels.priority === 'unknown',
      );
      if (unknown === undefined) {
        samples.push({ ...named, labels: { ...labels, priority: 'unknown' }, value: 1 });
      } else {
        unknown.value += 1;
      }
    }
  }
  // A priority other than the default is written only while a PR has it.
  return samples.filter(
    (sample) =>
      sample.name !== 'trunk_merge_queue_pull_requests' ||
      sample.value > 0 ||
      sample.labels.priority === 'medium',
  );
}

async function firstPollsDone(exporter: ExporterUnderTest, targets: number): Promise<Sample[]> {
  return exporter.waitFor(
    (samples) =>
      samples.filter((sample) => sample.name === 'trunk_exporter_target_up' && sample.value === 1)
        .length === targets,
    `${targets} targets up`,
  );
}

describe('an exporter with only an API key (API v2)', () => {
  it('renders the page a v1 exporter renders for the same world, with GETs only', async () => {
    const { world, simulator } = await startTestSimulator({
      seed: 11,
      token: TOKEN,
      apiKey: API_KEY,
    });
    world.advance(900);
    const v1 = await startTestExporter(
      configYaml({ apiUrl: simulator.origin, token: TOKEN, targets: TARGETS }),
    );
    const v1Samples = await firstPollsDone(v1, 6);
    await v1.stop();
    simulator.resetRequestCounts();
    const v2 = await startTestExporter(
      configYaml({ apiUrl: simulator.origin, token: null, apiKey: API_KEY, targets: TARGETS }),
    );
    const v2Samples = await firstPollsDone(v2, 6);

    expect(shared(v1Samples).length).toBeGreaterThan(50);
    expect(shared(v2Samples)).toEqual(shared(await asV2Tells(v1Samples, simulator.origin)));
    expect(v2Samples.filter((sample) => sample.name === V2_ONLY_FAMILY).length).toBeGreaterThan(0);
    expect(v1Samples.filter(v1Only).length).toBeGreaterThan(0);
    expect(v2Samples.filter(v1Only)).toEqual([]);
    const calls = Object.keys(simulator.requestCountsByMethod());
    expect(calls.filter((call) => call.includes('/v1/'))).toEqual([]);
    expect(calls.filter((call) => !call.startsWith('GET '))).toEqual([]);
    expect(v2.logs()).not.toContain(API_KEY);
  });
});

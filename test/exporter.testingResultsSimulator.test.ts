// Testing attempts against the simulator's truth: a real exporter with only an API key polls the
// demo's simulated organization on loopback while the world runs an hour (batches, bisections,
// restarts, failed PRs resubmitted, the incident cycle's eviction loops); its testing families
// must say exactly what the model's queues recorded after the exporter's first poll, rendered as
// the simulator answers them.
import { describe, expect, it } from 'vitest';
import { renderTestingResult } from '../src/simulator/v2TestingResults.js';
import { repositoryKey } from '../src/simulator/repositories.js';
import { createDemoWorld } from '../src/demo/demo.js';
import { select, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import { startTestSimulator, v2QueueIds } from './support/simulator.js';

const API_KEY = 'trunk_v2_testing-truth-key';
const DURATION = 'trunk_merge_queue_testing_duration_seconds';

/** count and sum by `outcome/bisection`, and bisections started, of one queue. */
interface QueueTally {
  readonly series: Record<string, { count: number; sum: number }>;
  readonly bisectionsStarted: number;
}

function pageTally(samples: readonly Sample[], repo: string, branch: string): QueueTally {
  const series: QueueTally['series'] = {};
  for (const sample of select(samples, `${DURATION}_count`, { repo, branch })) {
    if (sample.value === 0) continue;
    const { outcome = '', bisection = '' } = sample.labels;
    const sum = select(samples, `${DURATION}_sum`, { repo, branch, outcome, bisection })[0];
    series[`${outcome}/${bisection}`] = { count: sample.value, sum: sum?.value ?? NaN };
  }
  const counter = (name: string) => select(samples, name, { repo, branch })[0]?.value ?? NaN;
  return {
    series,
    bisectionsStarted: counter('trunk_merge_queue_bisections_started_total'),
  };
}

const sorted = (tally: QueueTally) => ({ ...tally, series: Object.entries(tally.series).sort() });

describe('testing attempts against the simulator', () => {
  it('equal what each queue of the world recorded after the first poll, as the simulator answers them', async () => {
    const startTime = Math.floor(Date.now() / 1000);
    // The demo's world: its incident cycle evicts one PR four times every ten minutes.
    const { world } = createDemoWorld(11, startTime);
    const { simulator } = await startTestSimulator({ world, token: 'unused', apiKey: API_KEY });
    const targets = world.repositories
      .filter((repository) => repository.branches.length > 0)
      .map((r) => `  - repo: ${repositoryKey(r)}\n    branches: [${r.branches.join(', ')}]`)
      .join('\n');
    const exporter = await startTestExporter(
      configYaml({
        apiUrl: simulator.origin,
        token: null,
        apiKey: API_KEY,
        targets,
        polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
      }),
    );
    await exporter.waitFor(
      (samples) => select(samples, `${DURATION}_count`).length > 0,
      'every queue read once',
    );
    // The world stands still until the first polls are done; then an hour of it at once.
    const queueIds = await v2QueueIds(simulator, API_KEY);
    /**
     * What each queue's model did after the first poll, in its own terms: each attempt it recorded
     * (a row of "one pull request's stretch of testing"), under its outcome unless the simulator
     * serves it without one ("absent when Trunk reports no classification": `unknown`), its
     * testing time from its start to its end; each batch it split once, however many PRs it held.
     */
    const truth = () =>
      world.mergeQueues.map(({ repository, model }) => {
        const repo = repositoryKey(repository);
        const queueId = queueIds.get(`${repo} ${model.branch}`) ?? '';
        const series: QueueTally['series'] = {};
        const splitBatches = new Set<number>();
        for (const attempt of model.testing.attempts) {
          if (attempt.endedAt <= startTime) continue;
          const row = renderTestingResult(queueId, attempt);
          const outcome = row.outcome === undefined ? 'unknown' : attempt.outcome;
          const entry = (series[`${outcome}/${String(attempt.isBisection)}`] ??= {
            count: 0,
            sum: 0,
          });
          entry.count += 1;
          entry.sum += attempt.endedAt - attempt.startedAt;
          if (attempt.startedBisection) splitBatches.add(attempt.batch);
        }
        return {
          repo,
          branch: model.branch,
          tally: { series, bisectionsStarted: splitBatches.size },
        };
      });
    const onPage = (samples: readonly Sample[], expected: ReturnType<typeof truth>) =>
      expected.every(
        ({ repo, branch, tally }) =>
          JSON.stringify(sorted(pageTally(samples, repo, branch))) ===
          JSON.stringify(sorted(tally)),
      );
    // The hour in steps of ten minutes, each read by the exporter before the next: every read
    // continues from the last (a PR evicted in one step and again in the next is a repeat).
    let expected = truth();
    let page: Sample[] = [];
    for (let step = 1; step <= 6; step++) {
      world.advance(startTime + step * 600);
      expected = truth();
      // A read happens when a PR left testing or the queue: within seconds at 0.2 s polls.
      page = await exporter.waitFor((samples) => onPage(samples, expected), `step ${step}`);
    }
    for (const { repo, branch, tally } of expected) {
      expect(sorted(pageTally(page, repo, branch)), `${repo} ${branch}`).toEqual(sorted(tally));
    }
    // The world's hour has what the families are for.
    const all = expected.flatMap(({ tally }) => Object.keys(tally.series));
    expect(all).toContain('passed/false');
    expect(all).toContain('failed/false');
    expect(all).toContain('interrupted/false');
    // Bisections need a batching queue whose batch fails, which not every hour of the world has:
    // test/poller/v2/v2TestingResultCount.test.ts pins them; here they only have to equal the truth.
    // Six simulated hours, each moved and read: seconds of CPU, several times that when busy.
  }, 120_000);
});

// Testing attempts end to end: a real exporter with an API key polls a node:http fake of one merge
// queue's v2 reads, testing results included, on loopback; its page must say what the fake
// recorded after the exporter's first poll, each result once. An exporter with the v1 token
// (against the simulator) has no such read and no such series.
import { afterEach, describe, expect, it } from 'vitest';
import type { Sample } from './support/exposition.js';
import {
  configYaml,
  startFrozenSimulator,
  startTestExporter,
  type ExporterUnderTest,
} from './support/exporterHarness.js';
import {
  startTestingResultsFake,
  truthSince,
  type FakeTestingResult,
  type Tally,
} from './support/testingResultsFake.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const API_KEY = 'trunk_v2_testing-e2e-key';
const DURATION = 'trunk_merge_queue_testing_duration_seconds';
const BISECTIONS = 'trunk_merge_queue_bisections_started_total';
const TARGETS = '  - repo: github.com/acme/web\n    branches: [main]';

/** The page's testing families for the queue, as a tally (series without attempts left out). */
function pageTally(samples: readonly Sample[]): Tally {
  const series: Tally['series'] = {};
  const value = (name: string, labels: Readonly<Record<string, string>>) =>
    samples.find(
      (sample) =>
        sample.name === name &&
        sample.labels.outcome === labels.outcome &&
        sample.labels.bisection === labels.bisection,
    )?.value ?? 0;
  for (const sample of samples) {
    if (sample.name !== `${DURATION}_count` || sample.value === 0) continue;
    const { outcome = '', bisection = '' } = sample.labels;
    series[`${outcome}/${bisection}`] = {
      count: sample.value,
      sum: value(`${DURATION}_sum`, sample.labels),
    };
  }
  const bisectionsStarted = samples.find((sample) => sample.name === BISECTIONS)?.value ?? 0;
  return { series, bisectionsStarted };
}

/** A tally as text that does not depend on the order its series were met in. */
function canonical(tally: Tally): string {
  return JSON.stringify([Object.entries(tally.series).sort(), tally.bisectionsStarted]);
}

const nowSeconds = () => Date.now() / 1000;

function result(
  pullRequestNumber: number,
  seconds: number,
  outcome: string | undefined,
  extra: Partial<FakeTestingResult> = {},
): FakeTestingResult {
  return {
    pullRequestNumber,
    endedAt: new Date(nowSeconds() * 1000).toISOString(),
    testingDurationMs: seconds * 1000,
    ...(outcome === undefined ? {} : { outcome }),
    isBisection: false,
    startedBisection: false,
    ...extra,
  };
}

async function firstPollDone(exporter: ExporterUnderTest): Promise<Sample[]> {
  return exporter.waitFor(
    (samples) =>
      samples.some((sample) => sample.name === 'trunk_exporter_target_up' && sample.value === 1),
    'the queue polled',
  );
}

describe('testing attempts through a real exporter', () => {
  it('serves what the queue recorded since the first poll, each result once, API v2 only', async () => {
    const fake = await startTestingResultsFake(nowSeconds);
    fake.live = [1, 2, 3];
    fake.pageSize = 2;
    // Testing that ended before the exporter started: history, never counted.
    fake.results.push({
      ...result(90, 600, 'passed'),
      endedAt: new Date(Date.now() - 60_000).toISOString(),
    });
    const startedAt = nowSeconds();
    const exporter = await startTestExporter(
      configYaml({
        apiUrl: fake.origin,
        token: null,
        apiKey: API_KEY,
        targets: TARGETS,
        polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
      }),
    );
    const started = await firstPollDone(exporter);
    // Every documented outcome from the start at 0, bisection steps too (the queue batches).
    expect(
      started
        .filter((sample) => sample.name === `${DURATION}_count`)
        .map(({ labels }) => `${labels.outcome ?? ''}/${labels.bisection ?? ''}`),
    ).toEqual([
      'passed/false',
      'failed/false',
      'interrupted/false',
      'cancelled/false',
      'passed/true',
      'failed/true',
      'interrupted/true',
      'cancelled/true',
    ]);

    fake.results.push(
      result(1, 754, 'passed', { entryConclusion: 'merged', verificationRunId: 'run-1' }),
      result(2, 1800, 'failed', { startedBisection: true, verificationRunId: 'run-2' }),
      result(2, 600, 'failed', { isBisection: true, verificationRunId: 'run-3' }),
      result(3, 120, undefined),
      result(4, 60, 'timedOut'),
    );
    fake.leave(1, nowSeconds());
    const truth = truthSince(fake.results, startedAt);
    const samples = await exporter.waitFor(
      (current) => canonical(pageTally(current)) === canonical(truth),
      'the page to show every result',
    );
    // More reads (PRs leaving, results recorded later) count only what is new.
    fake.results.push(result(5, 300, 'interrupted'));
    fake.leave(2, nowSeconds());
    const later = truthSince(fake.results, startedAt);
    const after = await exporter.waitFor(
      (current) => canonical(pageTally(current)) === canonical(later),
      'the page to show the later result',
    );
    // One more read, which lists earlier results again (the overlap): the poll after it starts
    // once it is recorded.
    fake.leave(3, nowSeconds());
    const reads = fake.testingReads.length;
    await exporter.waitFor(() => fake.testingReads.length > reads, 'one more read');
    const polls = fake.liveReads();
    await exporter.waitFor(() => fake.liveReads() > polls, 'the poll after it');

    expect(pageTally(await exporter.samples())).toEqual(later);
    expect(pageTally(samples)).toEqual(truth);
    // Up, once a poll a busy machine ran past its 0.2 s interval (0 meanwhile) has ended.
    await exporter.waitFor(
      (current) =>
        current.find((sample) => sample.name === 'trunk_exporter_target_up')?.value === 1,
      'the queue up',
    );
    expect(
      after.find(
        (sample) =>
          sample.name === 'trunk_exporter_api_anomalies_total' &&
          sample.labels.endpoint === 'v2/merge-queues/{id}/testing-results' &&
          sample.labels.kind === 'unknown_value',
      )?.value,
    ).toBeGreaterThan(0);
    expect(exporter.logs()).not.toContain(API_KEY);
  });

  it('has no testing series for a queue read through API v1', async () => {
    const { simulator } = await startFrozenSimulator();
    const exporter = await startTestExporter(
      configYaml({ apiUrl: simulator.origin, targets: TARGETS }),
    );
    const samples = await firstPollDone(exporter);

    expect(samples.filter((sample) => sample.name.startsWith(DURATION))).toEqual([]);
    expect(samples.filter((sample) => sample.name === BISECTIONS)).toEqual([]);
  });
});

// Testing attempts end to end: a real exporter with an API key polls a node:http fake of one merge
// queue's v2 reads, testing results included, on loopback; its page must say what the rows the
// test recorded after the exporter's first poll mean, counted by hand, each result once. An
// exporter with the v1 token (against the simulator) has no such read and no such series.
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
  type FakeTestingResult,
  type Tally,
  type TestingResultsFake,
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

/** Waits until the exporter's page shows exactly `tally` (`what` names it if it never does). */
function pageShows(exporter: ExporterUnderTest, tally: Tally, what: string): Promise<Sample[]> {
  return exporter.waitFor((current) => canonical(pageTally(current)) === canonical(tally), what);
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

/** The exporter of one queue (github.com/acme/web main) read through API v2 from `apiUrl`. */
function queueExporterYaml(apiUrl: string): string {
  return configYaml({
    apiUrl,
    token: null,
    apiKey: API_KEY,
    targets: TARGETS,
    polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
  });
}

/** Makes the exporter read testing results once more (`trigger`), and waits for the poll after it. */
async function oneMoreRead(
  exporter: ExporterUnderTest,
  fake: TestingResultsFake,
  trigger: () => void,
): Promise<void> {
  const reads = fake.testingReads.length;
  trigger();
  await exporter.waitFor(() => fake.testingReads.length > reads, 'one more read');
  const polls = fake.liveReads();
  await exporter.waitFor(() => fake.liveReads() > polls, 'the poll after it');
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
    const exporter = await startTestExporter(queueExporterYaml(fake.origin));
    const started = await firstPollDone(exporter);
    // From the start at 0: every documented outcome, and of bisection steps (the queue batches)
    // the two the definition names, "a passing bisection step" and one that "splits again".
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
    ]);

    fake.results.push(
      result(1, 754, 'passed', { entryConclusion: 'merged', verificationRunId: 'run-1' }),
      result(2, 1800, 'failed', { startedBisection: true, verificationRunId: 'run-2' }),
      result(2, 600, 'failed', { isBisection: true, verificationRunId: 'run-3' }),
      result(3, 120, undefined),
      result(4, 60, 'timedOut'),
    );
    fake.leave(1, nowSeconds());
    // One row, one attempt; PR 2's first row split its batch (one run); no outcome is `unknown`,
    // an outcome Trunk added is `other`.
    const truth: Tally = {
      series: {
        'passed/false': { count: 1, sum: 754 },
        'failed/false': { count: 1, sum: 1800 },
        'failed/true': { count: 1, sum: 600 },
        'unknown/false': { count: 1, sum: 120 },
        'other/false': { count: 1, sum: 60 },
      },
      bisectionsStarted: 1,
    };
    const samples = await pageShows(exporter, truth, 'the page to show every result');
    // More reads (PRs leaving, results recorded later) count only what is new.
    fake.results.push(result(5, 300, 'interrupted'));
    fake.leave(2, nowSeconds());
    const later: Tally = {
      ...truth,
      series: { ...truth.series, 'interrupted/false': { count: 1, sum: 300 } },
    };
    const after = await pageShows(exporter, later, 'the page to show the later result');
    // One more read, which lists earlier results again (the overlap).
    await oneMoreRead(exporter, fake, () => {
      fake.leave(3, nowSeconds());
    });

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

  it('counts a failed batch of three PRs as one bisection started, and its bisection step that splits again as one more', async () => {
    const fake = await startTestingResultsFake(nowSeconds);
    fake.live = [1, 2, 3, 4, 5];
    const exporter = await startTestExporter(queueExporterYaml(fake.origin));
    await firstPollDone(exporter);

    // startedBisection: "This failure caused the pull request's batch to be split. Can be true
    // together with isBisection, when a bisection step splits again." A batched run "appears
    // once per pull request it tested": run 7 tested PRs 1, 2 and 3 together and failed, then
    // its bisection step, run 8, tested PRs 1 and 2 together and failed again.
    const batchEnded = { endedAt: new Date().toISOString(), startedBisection: true };
    for (const pr of [1, 2, 3]) {
      fake.results.push(result(pr, 900, 'failed', { ...batchEnded, verificationRunId: 'run-7' }));
    }
    const stepEnded = { endedAt: new Date().toISOString(), startedBisection: true };
    for (const pr of [1, 2]) {
      fake.results.push(
        result(pr, 300, 'failed', { ...stepEnded, isBisection: true, verificationRunId: 'run-8' }),
      );
    }
    fake.leave(4, nowSeconds());
    // Five attempts, two splits.
    const expected: Tally = {
      series: {
        'failed/false': { count: 3, sum: 2700 },
        'failed/true': { count: 2, sum: 600 },
      },
      bisectionsStarted: 2,
    };
    await pageShows(exporter, expected, 'two bisections started');
    // One more read lists the rows again (the overlap): they count nothing.
    await oneMoreRead(exporter, fake, () => {
      fake.leave(5, nowSeconds());
    });

    expect(pageTally(await exporter.samples())).toEqual(expected);
  });

  it('counts a result dated a day ahead once and reports it, and results that end after it still count', async () => {
    const trunk = { aheadSeconds: 0 };
    const fake = await startTestingResultsFake(() => nowSeconds() + trunk.aheadSeconds);
    fake.live = [1, 2, 3, 4];
    const exporter = await startTestExporter(queueExporterYaml(fake.origin));
    await firstPollDone(exporter);

    // A Trunk whose clock is a day ahead answers a read: its row ended "tomorrow".
    trunk.aheadSeconds = 86_400;
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    fake.results.push(result(1, 300, 'passed', { endedAt: tomorrow, verificationRunId: 'run-1' }));
    fake.leave(1, nowSeconds());
    await exporter.waitFor(
      (current) => pageTally(current).series['passed/false']?.count === 1,
      "tomorrow's result counted",
    );
    trunk.aheadSeconds = 0;
    fake.results.push(result(2, 120, 'failed', { verificationRunId: 'run-2' }));
    fake.leave(2, nowSeconds());
    const expected: Tally = {
      series: {
        'passed/false': { count: 1, sum: 300 },
        'failed/false': { count: 1, sum: 120 },
      },
      bisectionsStarted: 0,
    };
    await pageShows(exporter, expected, "today's result counted after tomorrow's");
    // The clock is ahead again: tomorrow's row is listed again and counts nothing.
    trunk.aheadSeconds = 86_400;
    await oneMoreRead(exporter, fake, () => {
      fake.leave(3, nowSeconds());
    });

    const samples = await exporter.samples();
    expect(pageTally(samples)).toEqual(expected);
    expect(
      samples.find(
        (sample) =>
          sample.name === 'trunk_exporter_api_anomalies_total' &&
          sample.labels.endpoint === 'v2/merge-queues/{id}/testing-results' &&
          sample.labels.kind === 'future_timestamp',
      )?.value,
    ).toBe(1);
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

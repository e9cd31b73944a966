// From the outlier to the pull request, through a real exporter holding an API key and polling a
// fake organization the test moves by hand: in OpenMetrics each latency histogram's bucket names
// the pull request of its latest observation, with the value and the time Trunk's fields give.
// Every expected figure is written here from the scenario and the definition: time in queue from
// the entry's first sight (`stateChangedAt`, "when it entered its current state") to its
// conclusion (`stateChangedAt` of the concluded entry); a testing attempt's `testingDurationMs`
// ("How long this stretch of testing lasted") ending at `endedAt`, named by its
// `pullRequestNumber`; a run's `updatedAt` ("For a finished run this approximates when it
// concluded") minus `createdAt`, named by its first `testedPullRequests` ("The pull requests
// included in this run").
// A real Prometheus with exemplar storage (`--enable-feature=exemplar-storage`) scraping that
// exporter returns the same from /api/v1/query_exemplars.
import { afterEach, describe, expect, it } from 'vitest';
import { select } from './support/exposition.js';
import {
  configYaml,
  startTestExporter,
  type ExporterUnderTest,
} from './support/exporterHarness.js';
import { fixtureAt } from './support/fakeTrunkV2.js';
import {
  WEB_QUEUE,
  entryRow,
  moveEntry,
  startFakeWebQueue,
  testingResult,
} from './support/queueEntryRows.js';
import { startPrometheus, type ExemplarSeries } from './support/prometheus.js';
import { findSystemBinary } from './support/systemBinary.js';
import { WEB_MAIN } from './support/webQueueSamples.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const prometheusBinary = findSystemBinary('prometheus', 'prometheus');
const OPENMETRICS = { Accept: 'application/openmetrics-text; version=1.0.0' };
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** A verification run shaped as the fixture, with its times, status and tested pull requests. */
function verificationRun(
  id: string,
  status: string,
  createdAt: number,
  updatedAt: number,
  tested: readonly number[],
): { createdAt: string } & Record<string, unknown> {
  const template = fixtureAt('verification-run-failed-on-a-required-check.json') as {
    testedPullRequests: Record<string, unknown>[];
  };
  const [pr] = template.testedPullRequests;
  return {
    ...template,
    id,
    status,
    createdAt: iso(createdAt),
    updatedAt: iso(updatedAt),
    testedPullRequests: tested.map((number) => ({ ...pr, number })),
  };
}

/** A testing result of PR `number` that ended at `endedAt` after `seconds` of testing. */
function attempt(
  number: number,
  endedAt: number,
  outcome: string,
  seconds: number,
): { endedAt: string } {
  return { ...testingResult(number, endedAt, outcome), testingDurationMs: seconds * 1000 } as {
    endedAt: string;
  };
}

/** OpenMetrics' `bucket # {pr="7"} value timestamp`, the bucket's labels without repo and branch. */
const EXEMPLAR_LINE =
  /^(\w+)_bucket\{repo="github.com\/acme\/web",branch="main",(.*),le="([^"]+)"\} \S+ # \{pr="(\d+)"\} (\S+) (\S+)$/;

/** Exemplars by `family{labels} le=…` (without repo and branch): pull request, value, timestamp. */
type Exemplars = Record<string, [number, number, number]>;

/** Each exemplar of the queue's OpenMetrics page. */
function exemplarsOf(page: string): Exemplars {
  return Object.fromEntries(
    page.split('\n').flatMap((line) => {
      const match = EXEMPLAR_LINE.exec(line);
      if (match === null) return [];
      const [, family, labels, le, pr, value, timestamp] = match;
      return [
        [
          `${family ?? ''}{${labels ?? ''}} le=${le ?? ''}`,
          [Number(pr), Number(value), Number(timestamp)],
        ],
      ];
    }),
  );
}

/**
 * The scenario: #7 and #8 testing together in run A since 15 minutes before the start; between two
 * polls #7 merges, and the exporter counts its exit, the attempts and the runs. Resolves once it
 * has, with the exporter and the times the test set.
 */
async function mergedScenario(): Promise<{
  exporter: ExporterUnderTest;
  enteredAt: number;
  mergedAt: number;
}> {
  const start = Math.floor(Date.now() / 1000);
  // #7 and #8 testing together in run A since 15 minutes before the start.
  const enteredAt = start - 900;
  const pr7 = entryRow(7, 'testing', enteredAt);
  const pr8 = entryRow(8, 'testing', enteredAt);
  const fake = await startFakeWebQueue([pr7, pr8]);
  const runs = fake.verificationRuns(WEB_QUEUE);
  runs.push(verificationRun('run-a', 'inProgress', enteredAt, enteredAt, [7, 8]));
  const exporter = await startTestExporter(
    configYaml({
      apiUrl: fake.origin,
      token: null,
      apiKey: 'trunk_v2_exemplars-key',
      targets: '  - repo: github.com/acme/web\n    branches: [main]',
      polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
    }),
  );
  await exporter.waitFor(
    (samples) =>
      select(samples, 'trunk_merge_queue_verification_runs_in_progress', {
        ...WEB_MAIN,
        bisection: 'false',
      })[0]?.value === 1,
    'the first poll',
  );

  // Between two polls: the one listing #7 as testing has ended (the next one waits for its list
  // of pull requests), and the next one lists what follows. Run A succeeds, #7 merges with it and
  // #8 goes back to pending, and their testing results say how long each attempt lasted: #8's
  // was interrupted, and one of #9 ended in #7's bucket before #7's. Run B (testing nothing,
  // which the definition allows) was cancelled. All after the first poll, from which the
  // exporter counts.
  const livePullRequests = /^\/v2\/merge-queues\/[^/]+\/pull-requests$/;
  fake.hold(livePullRequests);
  await exporter.waitFor(() => fake.held() > 0, 'a poll waiting for the list');
  fake.release();
  await exporter.waitFor(() => fake.held() > 0, 'the poll after it waiting');
  fake.hold(undefined);
  // In eighths of a second, which ISO timestamps and doubles hold exactly: the next eighth, once
  // it has passed, so after the list the poll before was answered (a poll held that long is
  // followed at once by the next, so rounding down could fall before that answer).
  const mergedAt = Math.ceil(Date.now() / 125) / 8;
  await new Promise((resolve) => setTimeout(resolve, mergedAt * 1000 - Date.now() + 1));
  moveEntry(pr7, 'merged', mergedAt);
  moveEntry(pr8, 'pending', mergedAt);
  fake
    .testingResults(WEB_QUEUE)
    .push(
      attempt(9, mergedAt - 0.125, 'passed', 950),
      attempt(7, mergedAt, 'passed', 1000),
      attempt(8, mergedAt - 0.25, 'interrupted', 40),
    );
  runs.splice(
    0,
    1,
    verificationRun('run-a', 'succeeded', enteredAt, mergedAt, [7, 8]),
    verificationRun('run-b', 'cancelled', mergedAt - 0.25, mergedAt - 0.125, []),
  );
  // The waiting poll finds #7 gone, and its reads what happened.
  fake.release();

  await exporter.waitFor(
    (samples) =>
      select(samples, 'trunk_merge_queue_time_in_queue_seconds_count', {
        ...WEB_MAIN,
        outcome: 'merged',
      })[0]?.value === 1 &&
      select(samples, 'trunk_merge_queue_testing_duration_seconds_count', {
        ...WEB_MAIN,
        outcome: 'interrupted',
        bisection: 'false',
      })[0]?.value === 1 &&
      select(samples, 'trunk_merge_queue_verification_run_duration_seconds_count', {
        ...WEB_MAIN,
        status: 'cancelled',
        bisection: 'false',
      })[0]?.value === 1,
    'the exit, the attempts and the runs counted',
  );
  return { exporter, enteredAt, mergedAt };
}

/** What Prometheus stored, keyed as exemplarsOf keys the page: the labels in the page's order. */
function storedExemplars(series: readonly ExemplarSeries[]): Exemplars {
  return Object.fromEntries(
    series.flatMap(({ seriesLabels: labels, exemplars }) =>
      exemplars.map(({ labels: { pr }, value, timestamp }) => {
        const family = (labels.__name__ ?? '').replace(/_bucket$/, '');
        const others = ['outcome', 'status', 'bisection']
          .filter((label) => labels[label] !== undefined)
          .map((label) => `${label}="${labels[label] ?? ''}"`);
        const key = `${family}{${others.join(',')}} le=${labels.le ?? ''}`;
        return [key, [Number(pr), Number(value), timestamp]] as const;
      }),
    ),
  );
}

/** Each bucket's exemplar in the scenario, as exemplarsOf gives them. */
function expectedExemplars(enteredAt: number, mergedAt: number): Exemplars {
  // merged − entered is 900 s and the seconds the test took: the 1,200 s bucket. #7's 1,000 s lands
  // there too, with #9's 950 s, which ended earlier; 40 s in the 60 s bucket. Run A took as long
  // as #7 was in the queue; run B has no pull request to name.
  return {
    'trunk_merge_queue_time_in_queue_seconds{outcome="merged"} le=1200.0': [
      7,
      mergedAt - enteredAt,
      mergedAt,
    ],
    'trunk_merge_queue_testing_duration_seconds{outcome="passed",bisection="false"} le=1200.0': [
      7,
      1000,
      mergedAt,
    ],
    'trunk_merge_queue_testing_duration_seconds{outcome="interrupted",bisection="false"} le=60.0': [
      8,
      40,
      mergedAt - 0.25,
    ],
    'trunk_merge_queue_verification_run_duration_seconds{status="succeeded",bisection="false"} le=1200.0':
      [7, mergedAt - enteredAt, mergedAt],
  };
}

describe('exemplars through a real exporter', () => {
  it('name the pull request of each bucket’s latest exit, testing attempt and run, in OpenMetrics only', async () => {
    const { exporter, enteredAt, mergedAt } = await mergedScenario();
    const openMetrics = await exporter.scrape('/metrics', OPENMETRICS);
    expect(exemplarsOf(openMetrics)).toEqual(expectedExemplars(enteredAt, mergedAt));
    // Never a per-PR label, and nothing of them in the Prometheus text format.
    const labelSets = openMetrics.split('\n').map((line) => line.split(' # ')[0]);
    expect(labelSets.filter((line) => line?.includes('pr="'))).toEqual([]);
    const text = await exporter.scrape('/metrics');
    expect(text).not.toContain(' # {');
  });

  it.skipIf(prometheusBinary === undefined)(
    'a real Prometheus with exemplar storage returns them from /api/v1/query_exemplars',
    async () => {
      const { exporter, enteredAt, mergedAt } = await mergedScenario();
      const prometheus = await startPrometheus({
        binary: prometheusBinary ?? 'prometheus',
        scrapeTarget: new URL(exporter.exporter.url).host,
        intervalSeconds: 0.2,
        features: ['exemplar-storage'],
      });
      try {
        const query = encodeURIComponent(
          '{__name__=~"trunk_merge_queue_(time_in_queue|testing_duration|verification_run_duration)_seconds_bucket"}',
        );
        const range = `start=${String(enteredAt)}&end=${String(Math.ceil(mergedAt) + 3600)}`;
        const expected = expectedExemplars(enteredAt, mergedAt);
        // Until Prometheus has scraped the page (it asks for OpenMetrics first).
        const deadline = Date.now() + 20_000;
        let stored: Exemplars = {};
        while (Object.keys(stored).length < Object.keys(expected).length && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          stored = storedExemplars(
            (await prometheus.api(
              `/api/v1/query_exemplars?query=${query}&${range}`,
            )) as ExemplarSeries[],
          );
        }
        expect(stored, prometheus.log()).toEqual(expected);
      } finally {
        await prometheus.stop();
      }
    },
    40_000,
  );
});

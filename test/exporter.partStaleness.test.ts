// One read of a v2 queue fails and hides only its own part (issue 38): a real exporter with an API
// key polls a node:http fake of one queue whose testing results answer 500 from some point on.
// The families that read fills (the testing attempts) keep their last values, then go once they
// are older than `polling.staleAfterSeconds`; the queue's gauges and its exit counts, filled by
// the other reads, stay, and the target stays up: "what its failure hides (only that part, whose
// families keep their last values until `staleAfterSeconds`, as a failed target does today)".
import { afterEach, describe, expect, it, vi } from 'vitest';
import { select, type Sample } from './support/exposition.js';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import { startTestingResultsFake } from './support/testingResultsFake.js';
import { cleanUp } from './trunk/harness.js';

afterEach(async () => {
  vi.useRealTimers();
  await cleanUp();
});

const STALE_AFTER_SECONDS = 600;

const nowSeconds = () => Date.now() / 1000;

/** The testing-duration count of attempts that passed outside a bisection. */
function passedAttempts(samples: readonly Sample[]): number | undefined {
  return select(samples, 'trunk_merge_queue_testing_duration_seconds_count').find(
    (sample) => sample.labels.outcome === 'passed' && sample.labels.bisection === 'false',
  )?.value;
}

function merged(samples: readonly Sample[]): number | undefined {
  return select(samples, 'trunk_merge_queue_pull_requests_exited_total').find(
    (sample) => sample.labels.outcome === 'merged',
  )?.value;
}

function enqueued(samples: readonly Sample[]): number {
  return select(samples, 'trunk_merge_queue_pull_requests').reduce(
    (total, sample) => total + sample.value,
    0,
  );
}

function up(samples: readonly Sample[]): number | undefined {
  return select(samples, 'trunk_exporter_target_up')[0]?.value;
}

describe('a read of a v2 queue that fails', () => {
  it('hides only its own families, once they are older than staleAfterSeconds, and leaves the target up', async () => {
    // The exporter's clock (Date alone) moves only where the test moves it.
    vi.useFakeTimers({ toFake: ['Date'] });
    const fake = await startTestingResultsFake(nowSeconds);
    fake.live = [1, 2, 3];
    const exporter = await startTestExporter(
      configYaml({
        apiUrl: fake.origin,
        token: null,
        apiKey: 'trunk_v2_part-staleness-key',
        targets: '  - repo: github.com/acme/web\n    branches: [main]',
        polling: `  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600\n  staleAfterSeconds: ${STALE_AFTER_SECONDS}`,
      }),
    );
    await exporter.waitFor((samples) => enqueued(samples) === 3, 'the queue polled');
    // #1 passes its testing (300 s) and merges: one attempt, one merged exit.
    vi.setSystemTime(Date.now() + 1000);
    fake.results.push({
      pullRequestNumber: 1,
      endedAt: new Date().toISOString(),
      testingDurationMs: 300_000,
      outcome: 'passed',
      isBisection: false,
      startedBisection: false,
    });
    fake.leave(1, nowSeconds());
    await exporter.waitFor(
      (samples) => passedAttempts(samples) === 1 && merged(samples) === 1,
      '#1 tested and merged',
    );

    // From now on every testing-results read answers 500; #2 merges, which asks for one.
    fake.failingReads = Number.MAX_SAFE_INTEGER;
    vi.setSystemTime(Date.now() + 1000);
    fake.leave(2, nowSeconds());
    await exporter.waitFor(
      () => fake.testingReads.some((read) => read.status === 500),
      'a failed testing-results read',
    );
    const failing = await exporter.waitFor(
      (samples) => merged(samples) === 2,
      '#2 merged, counted by the exit read',
    );
    // Not yet stale: the attempt read before the failure is still shown, the target up.
    expect(passedAttempts(failing)).toBe(1);
    expect(enqueued(failing)).toBe(1);
    expect(up(failing)).toBe(1);

    // staleAfterSeconds after the last good read of testing results, and a poll after that.
    vi.setSystemTime(Date.now() + (STALE_AFTER_SECONDS + 1) * 1000);
    const polls = fake.liveReads();
    const stale = await exporter.waitFor(
      () => fake.liveReads() > polls + 1,
      'a poll after the testing results went stale',
    );
    expect(select(stale, 'trunk_merge_queue_testing_duration_seconds_count')).toEqual([]);
    expect(select(stale, 'trunk_merge_queue_bisections_started_total')).toEqual([]);
    // What the other reads fill is as fresh as their last poll: the queue, its exits, the target.
    expect(enqueued(stale)).toBe(1);
    expect(merged(stale)).toBe(2);
    expect(up(stale)).toBe(1);
  });
});

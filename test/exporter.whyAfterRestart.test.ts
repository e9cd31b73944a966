// A restarted exporter starts its counters at 0 (Prometheus reads a new process as a reset), so it
// must not count again what its previous process counted: a failure its history and its webhook
// event told before the restart, and a verification run that concluded before it. From the
// scenario: after the restart the "why" families hold only what happens after it (PR #2's timeout,
// run-b).
import { afterEach, describe, expect, it } from 'vitest';
import {
  failed,
  failedEvent,
  live,
  record,
  testingWebQueue,
  webExporter,
} from './support/entryHistoryExporter.js';
import type { EntryRow } from './support/fakeTrunkV2.js';
import { WEB_QUEUE, moveEntry } from './support/queueEntryRows.js';
import { RUNS, conclude, series } from './support/verificationRunExporter.js';
import { run } from './support/verificationRunRows.js';
import { pollsFromNow } from './support/webQueueSamples.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const now = () => Date.now() / 1000;

describe('the why families after a restart of the process', () => {
  it('count nothing the previous process counted, and what comes after once', async () => {
    const start = Math.floor(now()) - 600;
    const {
      fake,
      rows: [pr1, pr2],
    } = await testingWebQueue([1, 2], start);
    const runA = { id: 'run-a', createdAt: start, tested: [1] };
    const runB = { id: 'run-b', createdAt: start + 1, tested: [2] };
    fake
      .verificationRuns(WEB_QUEUE)
      .push(
        run({ ...runA, status: 'inProgress', updatedAt: start }),
        run({ ...runB, status: 'inProgress', updatedAt: start + 1 }),
      );
    const first = await webExporter(fake, true);
    await first.exporter.waitFor((samples) => live(samples) === 2, 'two entries polled');
    await pollsFromNow(first.exporter, 1);
    // #1 fails on run-a, told by its event and its history.
    const at1 = now();
    await failedEvent(first.exporter, 1, at1, 'TEST_RUN_TIMEOUT');
    record(fake, 1, 'failed', at1, 'TEST_RUN_TIMEOUT');
    moveEntry(pr1 as EntryRow, 'failed', at1);
    conclude(fake, { ...runA, status: 'failed', updatedAt: Math.floor(at1) });
    await first.exporter.waitFor(
      (samples) => series(samples, RUNS, 'status,bisection')['failed/false'] === 1,
      'run-a counted',
    );
    await pollsFromNow(first.exporter, 2);
    expect(failed(await first.exporter.samples())).toEqual({ TEST_RUN_TIMEOUT: 1 });
    await first.exporter.stop();

    // The new process (Svix redelivers only what the old one did not take); then #2 fails on run-b.
    const second = await webExporter(fake, true);
    await second.exporter.waitFor((samples) => live(samples) === 1, 'one entry polled');
    await pollsFromNow(second.exporter, 2);
    const afterRestart = await second.exporter.samples();
    expect(failed(afterRestart)).toEqual({});
    expect(series(afterRestart, RUNS, 'status,bisection')['failed/false'] ?? 0).toBe(0);
    const at2 = now();
    record(fake, 2, 'failed', at2, 'TEST_RUN_TIMEOUT');
    moveEntry(pr2 as EntryRow, 'failed', at2);
    conclude(fake, { ...runB, status: 'failed', updatedAt: Math.floor(at2) });
    await second.exporter.waitFor((samples) => live(samples) === 0, '#2 gone');
    await pollsFromNow(second.exporter, 4);
    const later = await second.exporter.samples();
    expect(failed(later)).toEqual({ TEST_RUN_TIMEOUT: 1 });
    expect(series(later, RUNS, 'status,bisection')['failed/false']).toBe(1);
  });
});

// trunk_merge_queue_pull_requests_failed_total sums two witnesses (webhook events, queue-entry
// histories) and is a counter: Prometheus reads any decrease as a reset, so a series that went from
// 2 to 1 and back would make increase() count 1 and then 1 more failure that never happened (the
// merge-conflict alert reads increase() of this family). Through a real exporter with webhooks on,
// polling a fake organization whose queue and histories the test writes by hand: while the history
// reads fail past staleAfterSeconds, the series stays where it was, and goes on from there once
// they answer again.
import { afterEach, describe, expect, it } from 'vitest';
import {
  byLabel,
  failed,
  failedEvent,
  live,
  record,
  recordTesting,
  webExporter,
} from './support/entryHistoryExporter.js';
import { sum, type Sample } from './support/exposition.js';
import { entryRow, moveEntry, startFakeWebQueue } from './support/queueEntryRows.js';
import { WEB_MAIN, pollsFromNow } from './support/webQueueSamples.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const now = () => Date.now() / 1000;
const cancelled = (samples: readonly Sample[]) =>
  byLabel(samples, 'trunk_merge_queue_pull_requests_cancelled_total', 'reason');

/**
 * #90 fails and #91 is closed, seen by their histories alone; #5, never listed, fails with the same
 * reason as #90, seen by its webhook event alone; #92 is still testing. Resolves once both witnesses
 * counted (TEST_RUN_TIMEOUT 2), with every page scraped while waiting kept in `pages`.
 */
async function countedByBothWitnesses(options: { staleAfterSeconds?: number }) {
  const start = now() - 600;
  const pr90 = entryRow(90, 'testing', start);
  const pr91 = entryRow(91, 'testing', start);
  const pr92 = entryRow(92, 'testing', start);
  const fake = await startFakeWebQueue([pr90, pr91, pr92]);
  for (const number of [90, 91, 92]) recordTesting(fake, number, start);
  const { exporter, reload } = await webExporter(fake, true, options);
  await exporter.waitFor((samples) => live(samples) === 3, 'three entries polled');

  const at = now();
  record(fake, 90, 'failed', at, 'TEST_RUN_TIMEOUT');
  moveEntry(pr90, 'failed', at);
  record(fake, 91, 'cancelled', at, 'PR_CLOSED');
  moveEntry(pr91, 'cancelled', at);
  await failedEvent(exporter, 5, at, 'TEST_RUN_TIMEOUT');
  const pages: Sample[][] = [];
  const watch = (what: string, done: (samples: readonly Sample[]) => boolean) =>
    exporter.waitFor((samples) => {
      pages.push(samples);
      return done(samples);
    }, what);
  const both = await watch('both witnesses counted', (s) => cancelled(s).PR_CLOSED === 1);
  expect(failed(both)).toEqual({ TEST_RUN_TIMEOUT: 2 });
  return { fake, exporter, reload, pr92, watch, pages, both };
}

/**
 * The series on every page scraped from `both` on: there on each, and never lower than on the one
 * before.
 */
function neverWentDown(
  pages: readonly Sample[][],
  both: readonly Sample[],
): (number | undefined)[] {
  const values = pages
    .slice(pages.findIndex((page) => page === both))
    .map((page) => failed(page).TEST_RUN_TIMEOUT);
  expect(values.every((value, i) => value !== undefined && value >= (values[i - 1] ?? 2))).toBe(
    true,
  );
  return values;
}

describe('the failed family while a witness is hidden', () => {
  it('never goes down while the histories fail past staleAfterSeconds', async () => {
    const { fake, pr92, watch, pages, both } = await countedByBothWitnesses({
      staleAfterSeconds: 1,
    });

    // The histories answer 400 from now on, and #92 restarts (its history is to be read): their
    // own families hide, the failures stay at 2.
    fake.fail(/^\/v2\/queue-entry-history$/, 400);
    const restartAt = now();
    record(fake, 92, 'pending', restartAt, 'MANUAL_PUSH_TO_TARGET_BRANCH');
    moveEntry(pr92, 'pending', restartAt);
    const historyHidden = await watch(
      'the cancellations hidden',
      (s) => !('PR_CLOSED' in cancelled(s)),
    );
    expect(
      sum(historyHidden, 'trunk_exporter_target_up', { ...WEB_MAIN, kind: 'merge_queue' }),
    ).toBe(1);
    expect(failed(historyHidden)).toEqual({ TEST_RUN_TIMEOUT: 2 });

    // They answer again, and #92 fails: its history's failure adds to what was counted.
    fake.recover();
    const back = await watch('the cancellations back', (s) => cancelled(s).PR_CLOSED === 1);
    expect(failed(back)).toEqual({ TEST_RUN_TIMEOUT: 2 });
    const failedAt = now();
    record(fake, 92, 'testing', failedAt - 1, null);
    record(fake, 92, 'failed', failedAt, 'TEST_RUN_TIMEOUT');
    moveEntry(pr92, 'failed', failedAt);
    await watch('#92 counted', (s) => failed(s).TEST_RUN_TIMEOUT === 3);

    const values = neverWentDown(pages, both);
    expect(values.filter((value) => value === 2).length).toBeGreaterThan(2);
  });

  it("keeps the histories' share when a reload turns their read off, and goes on from it", async () => {
    const { fake, exporter, reload, pr92, watch, pages, both } = await countedByBothWitnesses({});

    // The operator turns the histories off: their own families go, the failures they counted stay.
    await reload(true, false);
    const off = await watch('the cancellations gone', (s) => !('PR_CLOSED' in cancelled(s)));
    expect(failed(off)).toEqual({ TEST_RUN_TIMEOUT: 2 });

    // The webhooks still count, from there.
    await failedEvent(exporter, 6, now(), 'TEST_RUN_TIMEOUT');
    await watch('#6 counted', (s) => failed(s).TEST_RUN_TIMEOUT === 3);

    // Turned on again, the histories add to what they had counted (a change made once polls run
    // with the read on: one seen while it was off is never asked for).
    await reload(true, true);
    await pollsFromNow(exporter, 2);
    const failedAt = now();
    record(fake, 92, 'failed', failedAt, 'TEST_RUN_TIMEOUT');
    moveEntry(pr92, 'failed', failedAt);
    await watch('#92 counted', (s) => failed(s).TEST_RUN_TIMEOUT === 4);

    neverWentDown(pages, both);
  });
});

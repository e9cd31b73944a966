// A failure of PR #1 on a timeout, told by both witnesses — Trunk's `pull_request.failed` webhook
// event and the queue-entry history's `failed` transition with reason `TEST_RUN_TIMEOUT` — in both
// orders, with reloads between them: one failure, so trunk_merge_queue_pull_requests_failed_total
// is 1 and stays 1.
import { afterEach, describe, expect, it } from 'vitest';
import {
  failed,
  failedEvent,
  live,
  record,
  testingWebQueue,
  webExporter,
} from '../support/entryHistoryExporter.js';
import type { ExporterUnderTest } from '../support/exporterHarness.js';
import type { EntryRow, FakeV2 } from '../support/fakeTrunkV2.js';
import { moveEntry } from '../support/queueEntryRows.js';
import { pollsFromNow } from '../support/webQueueSamples.js';
import { cleanUp } from '../trunk/harness.js';

afterEach(cleanUp);

const now = () => Date.now() / 1000;
const HISTORY = /^\/v2\/queue-entry-history$/;

/** #1's failure at `at` as its history and the queue's list show it from now on. */
function historyFails(fake: FakeV2, pr1: EntryRow, at: number): void {
  record(fake, 1, 'failed', at, 'TEST_RUN_TIMEOUT');
  moveEntry(pr1, 'failed', at);
}

/** Once a few polls more have ended: the failure counted once. */
async function countedOnce(exporter: ExporterUnderTest): Promise<void> {
  await pollsFromNow(exporter, 3);
  expect(failed(await exporter.samples())).toEqual({ TEST_RUN_TIMEOUT: 1 });
}

/** #1 and #2 testing, polled by an exporter with webhooks on. */
async function twoTesting() {
  const { fake, rows } = await testingWebQueue([1, 2], now() - 600);
  const { exporter, reload } = await webExporter(fake, true);
  await exporter.waitFor((samples) => live(samples) === 2, 'two entries polled');
  await pollsFromNow(exporter, 1);
  return { fake, pr1: rows[0] as EntryRow, exporter, reload };
}

type Step = 'event' | 'history' | 'reload' | 'historyOff' | 'historyOn' | 'hooksOff' | 'hooksOn';

describe('one failure told by the webhook event and by the history, a reload between them', () => {
  it.each<[string, Step[]]>([
    ['event, a reload changing nothing, history', ['event', 'reload', 'history']],
    ['history, a reload changing nothing, event', ['history', 'reload', 'event']],
    [
      'event, reloads turning the history read off and on, history',
      ['event', 'historyOff', 'historyOn', 'history'],
    ],
    [
      'event while the history read is off, a reload turning it on, history',
      ['historyOff', 'event', 'historyOn', 'history'],
    ],
    ['history, a reload turning the history read off, event', ['history', 'historyOff', 'event']],
    [
      'history, a reload turning webhooks off and on, event',
      ['history', 'hooksOff', 'hooksOn', 'event'],
    ],
  ])('%s', async (_what, steps) => {
    const { fake, pr1, exporter, reload } = await twoTesting();
    const at = now();
    let [webhooks, histories, evented] = [true, true, false];
    for (const step of steps) {
      if (step === 'event') {
        await failedEvent(exporter, 1, at, 'TEST_RUN_TIMEOUT');
        evented = true;
      } else if (step === 'history') {
        historyFails(fake, pr1, at);
        await exporter.waitFor(
          (samples) => (evented ? live(samples) === 1 : failed(samples).TEST_RUN_TIMEOUT === 1),
          'the history read',
        );
      } else {
        if (step !== 'reload') {
          webhooks = step === 'hooksOff' ? false : step === 'hooksOn' ? true : webhooks;
          histories = step === 'historyOff' ? false : step === 'historyOn' ? true : histories;
        }
        await reload(webhooks, histories);
      }
      await pollsFromNow(exporter, 1);
    }
    await countedOnce(exporter);
  });

  it.each([
    ['changing nothing', true],
    ['turning webhooks off', false],
  ])(
    'history read in flight, event, a reload %s, then the read answers',
    async (_what, webhooksAfter) => {
      const { fake, pr1, exporter, reload } = await twoTesting();
      fake.hold(HISTORY);
      const at = now();
      historyFails(fake, pr1, at);
      while (fake.held() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      await failedEvent(exporter, 1, at, 'TEST_RUN_TIMEOUT');
      await reload(webhooksAfter);
      await pollsFromNow(exporter, 1);
      fake.hold(undefined);
      fake.release();
      await countedOnce(exporter);
    },
  );
});

describe('one failure told by the webhook event before the first poll of a (re)started exporter', () => {
  it('is not counted again when the history lists it', async () => {
    const { fake, rows } = await testingWebQueue([1, 2], now() - 600);
    // The first poll waits on its list of pull requests while the event comes.
    fake.hold(/\/pull-requests$/);
    const { exporter } = await webExporter(fake, true);
    while (fake.held() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const at = now();
    await failedEvent(exporter, 1, at, 'TEST_RUN_TIMEOUT');
    // Trunk's list still shows #1 testing at the first poll; it is gone at the next.
    fake.hold(undefined);
    fake.release();
    await exporter.waitFor((samples) => live(samples) === 2, 'two entries polled');
    historyFails(fake, rows[0] as EntryRow, at);
    await exporter.waitFor((samples) => live(samples) === 1, '#1 gone');
    await countedOnce(exporter);
  });
});

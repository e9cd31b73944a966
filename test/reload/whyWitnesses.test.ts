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
  recordTesting,
  webExporter,
} from '../support/entryHistoryExporter.js';
import { entryRow, moveEntry, startFakeWebQueue } from '../support/queueEntryRows.js';
import { pollsFromNow } from '../support/webQueueSamples.js';
import { cleanUp } from '../trunk/harness.js';

afterEach(cleanUp);

const now = () => Date.now() / 1000;

async function twoTesting() {
  const start = now() - 600;
  const pr1 = entryRow(1, 'testing', start);
  const pr2 = entryRow(2, 'testing', start);
  const fake = await startFakeWebQueue([pr1, pr2]);
  recordTesting(fake, 1, start);
  recordTesting(fake, 2, start);
  const { exporter, reload } = await webExporter(fake, true);
  await exporter.waitFor((samples) => live(samples) === 2, 'two entries polled');
  await pollsFromNow(exporter, 1);
  /** #1's failure at `at` as its history and the queue list show it. */
  const historyFails = (at: number) => {
    record(fake, 1, 'failed', at, 'TEST_RUN_TIMEOUT');
    moveEntry(pr1, 'failed', at);
  };
  return { fake, exporter, reload, historyFails };
}

describe('one failure told by the webhook event and by the history, a reload between them', () => {
  it('event, a reload changing nothing, history', async () => {
    const { exporter, reload, historyFails } = await twoTesting();
    const at = now();
    await failedEvent(exporter, 1, at, 'TEST_RUN_TIMEOUT');
    await pollsFromNow(exporter, 1);
    await reload(true);
    historyFails(at);
    await exporter.waitFor((samples) => live(samples) === 1, '#1 gone');
    await pollsFromNow(exporter, 4);
    expect(failed(await exporter.samples())).toEqual({ TEST_RUN_TIMEOUT: 1 });
  });

  it('history, a reload changing nothing, event', async () => {
    const { exporter, reload, historyFails } = await twoTesting();
    const at = now();
    historyFails(at);
    await exporter.waitFor((samples) => failed(samples).TEST_RUN_TIMEOUT === 1, 'history read');
    await reload(true);
    await pollsFromNow(exporter, 1);
    await failedEvent(exporter, 1, at, 'TEST_RUN_TIMEOUT');
    await pollsFromNow(exporter, 3);
    expect(failed(await exporter.samples())).toEqual({ TEST_RUN_TIMEOUT: 1 });
  });

  it('event, reloads turning the history read off and on, history', async () => {
    const { exporter, reload, historyFails } = await twoTesting();
    const at = now();
    await failedEvent(exporter, 1, at, 'TEST_RUN_TIMEOUT');
    await pollsFromNow(exporter, 1);
    await reload(true, false);
    await pollsFromNow(exporter, 2);
    await reload(true, true);
    await pollsFromNow(exporter, 2);
    historyFails(at);
    await exporter.waitFor((samples) => live(samples) === 1, '#1 gone');
    await pollsFromNow(exporter, 4);
    expect(failed(await exporter.samples())).toEqual({ TEST_RUN_TIMEOUT: 1 });
  });

  it('event while the history read is off, a reload turning it on, history', async () => {
    const { exporter, reload, historyFails } = await twoTesting();
    await reload(true, false);
    await pollsFromNow(exporter, 2);
    const at = now();
    await failedEvent(exporter, 1, at, 'TEST_RUN_TIMEOUT');
    await pollsFromNow(exporter, 1);
    await reload(true, true);
    await pollsFromNow(exporter, 2);
    historyFails(at);
    await exporter.waitFor((samples) => live(samples) === 1, '#1 gone');
    await pollsFromNow(exporter, 4);
    expect(failed(await exporter.samples())).toEqual({ TEST_RUN_TIMEOUT: 1 });
  });

  it('history, a reload turning the history read off, event', async () => {
    const { exporter, reload, historyFails } = await twoTesting();
    const at = now();
    historyFails(at);
    await exporter.waitFor((samples) => failed(samples).TEST_RUN_TIMEOUT === 1, 'history read');
    await reload(true, false);
    await pollsFromNow(exporter, 1);
    await failedEvent(exporter, 1, at, 'TEST_RUN_TIMEOUT');
    await pollsFromNow(exporter, 3);
    expect(failed(await exporter.samples())).toEqual({ TEST_RUN_TIMEOUT: 1 });
  });

  it('history, a reload turning webhooks off and on, event', async () => {
    const { exporter, reload, historyFails } = await twoTesting();
    const at = now();
    historyFails(at);
    await exporter.waitFor((samples) => failed(samples).TEST_RUN_TIMEOUT === 1, 'history read');
    await reload(false);
    await pollsFromNow(exporter, 1);
    await reload(true);
    await failedEvent(exporter, 1, at, 'TEST_RUN_TIMEOUT');
    await pollsFromNow(exporter, 3);
    expect(failed(await exporter.samples())).toEqual({ TEST_RUN_TIMEOUT: 1 });
  });
  it.each([
    ['changing nothing', true],
    ['turning webhooks off', false],
  ])(
    'history read in flight, event, a reload %s, then the read answers',
    async (_what, webhooksAfter) => {
      const { fake, exporter, reload, historyFails } = await twoTesting();
      fake.hold(/^\/v2\/queue-entry-history$/);
      const at = now();
      historyFails(at);
      while (fake.held() === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      await failedEvent(exporter, 1, at, 'TEST_RUN_TIMEOUT');
      await reload(webhooksAfter);
      await pollsFromNow(exporter, 1);
      fake.hold(undefined);
      fake.release();
      await pollsFromNow(exporter, 4);
      expect(failed(await exporter.samples())).toEqual({ TEST_RUN_TIMEOUT: 1 });
    },
  );
});

describe('one failure told by the webhook event before the first poll of a (re)started exporter', () => {
  it('is not counted again when the history lists it', async () => {
    const start = now() - 600;
    const pr1 = entryRow(1, 'testing', start);
    const pr2 = entryRow(2, 'testing', start);
    const fake = await startFakeWebQueue([pr1, pr2]);
    recordTesting(fake, 1, start);
    recordTesting(fake, 2, start);
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
    record(fake, 1, 'failed', at, 'TEST_RUN_TIMEOUT');
    moveEntry(pr1, 'failed', at);
    await exporter.waitFor((samples) => live(samples) === 1, '#1 gone');
    await pollsFromNow(exporter, 4);
    expect(failed(await exporter.samples())).toEqual({ TEST_RUN_TIMEOUT: 1 });
  });
});

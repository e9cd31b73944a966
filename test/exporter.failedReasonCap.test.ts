// One cap of reasons for trunk_merge_queue_pull_requests_failed_total across its two witnesses,
// through a real exporter with webhooks on, polling a fake organization whose queue-entry
// histories the test writes by hand. Issue 39: "Reasons as Trunk spells them, at most 20 per queue
// and family, the rest `other`". Trunk's definition of a transition's `reason`: "This is an open
// set — it is the engine's own vocabulary and new values may appear within v2", so the reasons
// here are invented. The webhook events fail PRs the queue never listed (no history has them); the
// histories fail PRs no event is sent for: each failure has one witness.
import { afterEach, describe, expect, it } from 'vitest';
import {
  failed,
  failedEvent,
  live,
  record,
  recordTesting,
  webExporter,
} from './support/entryHistoryExporter.js';
import { sum, type Sample } from './support/exposition.js';
import type { EntryRow } from './support/fakeTrunkV2.js';
import { entryRow, moveEntry, startFakeWebQueue } from './support/queueEntryRows.js';
import { WEB_MAIN } from './support/webQueueSamples.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const now = () => Date.now() / 1000;
const total = (samples: readonly Sample[]) =>
  sum(samples, 'trunk_merge_queue_pull_requests_failed_total', WEB_MAIN);
const numbered = (prefix: string, from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${prefix}_${String(from + i).padStart(2, '0')}`);
const once = (reasons: readonly string[]) => Object.fromEntries(reasons.map((r) => [r, 1]));

describe('the failed family through a real exporter', () => {
  it('keeps 20 reasons per queue as labels across webhook events and histories, each label fixed, nothing decreasing', async () => {
    const start = now() - 600;
    // #101 to #115 fail in their histories with HISTORY_01 to HISTORY_15, #116 with WEBHOOK_07,
    // #117 with HISTORY_16.
    const rows = Array.from({ length: 17 }, (_, i) => entryRow(101 + i, 'testing', start));
    const fake = await startFakeWebQueue(rows);
    for (const row of rows) recordTesting(fake, row.number, start);
    const { exporter } = await webExporter(fake, true);
    await exporter.waitFor((samples) => live(samples) === 17, 'seventeen entries polled');
    const pages: Sample[][] = [];
    const failInHistory = (row: EntryRow, reason: string) => {
      const at = now();
      record(fake, row.number, 'failed', at, reason);
      moveEntry(row, 'failed', at);
    };
    /** The failures by reason once they total `failures`; every page scraped till then kept. */
    const counted = async (failures: number) => {
      const page = await exporter.waitFor(
        (samples) => {
          pages.push(samples);
          return total(samples) === failures;
        },
        `${String(failures)} failures`,
      );
      return failed(page);
    };

    // 15 reasons through webhook events: each its own label.
    const webhookReasons = numbered('WEBHOOK', 1, 15);
    for (const [i, reason] of webhookReasons.entries()) {
      await failedEvent(exporter, 1 + i, now(), reason);
    }
    expect(await counted(15)).toEqual(once(webhookReasons));

    // 5 reasons through histories: 20 named, the cap.
    const historyReasons = numbered('HISTORY', 1, 15);
    for (const i of [0, 1, 2, 3, 4])
      failInHistory(rows[i] as EntryRow, historyReasons[i] as string);
    const named = once([...webhookReasons, ...historyReasons.slice(0, 5)]);
    expect(await counted(20)).toEqual(named);

    // 10 more through histories: none of them named by either witness, all `other`.
    for (let i = 5; i < 15; i++) failInHistory(rows[i] as EntryRow, historyReasons[i] as string);
    expect(await counted(30)).toEqual({ ...named, other: 10 });

    // A reason one witness named keeps its label when the other sees it; a new one is `other`
    // whichever sees it.
    await failedEvent(exporter, 20, now(), 'HISTORY_03');
    failInHistory(rows[15] as EntryRow, 'WEBHOOK_07');
    await failedEvent(exporter, 21, now(), 'WEBHOOK_16');
    failInHistory(rows[16] as EntryRow, 'HISTORY_16');
    const last = { ...named, HISTORY_03: 2, WEBHOOK_07: 2, other: 12 };
    expect(await counted(34)).toEqual(last);
    const later = await exporter.samples();
    pages.push(later);
    expect(failed(later)).toEqual(last);

    // Across the scrapes no series vanished and none went down.
    for (const [index, page] of pages.entries()) {
      for (const [reason, value] of Object.entries(failed(pages[index - 1] ?? []))) {
        expect(failed(page)[reason] ?? 0).toBeGreaterThanOrEqual(value);
      }
    }
  });
});

// What the tests of github.com/acme/web main (queueEntryRows.ts) read of their exporter's page.
import { select, sum, type Sample } from './exposition.js';
import type { ExporterUnderTest } from './exporterHarness.js';

/** The labels of github.com/acme/web main. */
export const WEB_MAIN = { repo: 'github.com/acme/web', branch: 'main' };

/** trunk_merge_queue_state_transitions_total of the queue, as `from->to`: count. */
export function transitionsOf(samples: readonly Sample[]): Record<string, number> {
  return Object.fromEntries(
    select(samples, 'trunk_merge_queue_state_transitions_total', WEB_MAIN).map(
      (sample): [string, number] => [
        `${sample.labels.from ?? ''}->${sample.labels.to ?? ''}`,
        sample.value,
      ],
    ),
  );
}

/** Until `count` polls of the queue that began after now have ended. */
export async function pollsFromNow(exporter: ExporterUnderTest, count: number): Promise<void> {
  let since = Date.now() / 1000;
  for (let poll = 0; poll <= count; poll++) {
    const ended = since;
    await exporter.waitFor((samples) => {
      since = sum(samples, 'trunk_exporter_last_success_timestamp_seconds', WEB_MAIN);
      return since > ended;
    }, 'a poll');
  }
}

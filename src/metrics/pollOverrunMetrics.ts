import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';
import type { PollObserver } from '../poller/pollObserver.js';
import type { PollKind } from '../snapshot/types.js';
import { NAMESPACE, fqName } from './naming.js';

const SUBSYSTEM = 'exporter';

const POLL_OVERRUNS = fqName(NAMESPACE, SUBSYSTEM, 'poll_overruns', 'total');

const POLL_KINDS: readonly PollKind[] = ['merge_queue', 'flaky_tests'];

/** Registers the counter of polls that outlasted their interval and returns what feeds it. */
export function registerPollOverrunMetrics(registry: Registry): PollObserver {
  const overruns = new Counter({
    name: POLL_OVERRUNS,
    help:
      'Polls still running when their interval had passed, by target kind: their data is late. ' +
      'Each shows its target trunk_exporter_target_up 0 until a poll finishes; the log names late ' +
      'targets in at most one line a minute per kind.',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  // Present from the first scrape, so rate() and increase() see the first overrun as a change.
  for (const kind of POLL_KINDS) overruns.inc({ kind }, 0);
  return {
    pollOverran(kind) {
      overruns.inc({ kind });
    },
  };
}

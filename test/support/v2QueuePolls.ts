// One merge queue (github.com/acme/web main) polled through API v2 by the poll jobs as the exporter
// builds them with an API key, against a fake organization on loopback (fakeTrunkV2.ts) whose rows
// the test moves, on a clock the test moves; what each poll read besides the live list.
import { configuredTargets } from '../../src/config/targets.js';
import type { RepositoryTarget } from '../../src/config/types.js';
import { silentLogger, type Logger } from '../../src/log/logger.js';
import { buildPollJobs } from '../../src/poller/jobs/targetJobs.js';
import { QueueEntryHistoryReads } from '../../src/poller/v2/v2QueueEntryHistoryRead.js';
import { V2QueueDirectory } from '../../src/poller/v2/v2QueueDirectory.js';
import { V2TestDirectory } from '../../src/poller/v2/v2TestDirectory.js';
import { Secret } from '../../src/secrets/secret.js';
import { SnapshotStore } from '../../src/snapshot/store.js';
import { TrunkV2Client } from '../../src/trunk/v2Client.js';
import { makeClient } from '../trunk/harness.js';
import { exporterConfig } from './exporterConfig.js';
import type { EntryRow, FakeV2 } from './fakeTrunkV2.js';
import { startFakeWebQueue } from './queueEntryRows.js';

const API_KEY = 'trunk_v2_queue-polls-key';
/** The merge-queue interval, seconds. */
export const INTERVAL = 30;
/** The first poll's time: 2026-11-24T09:00:00Z. */
export const START = Date.parse('2026-11-24T09:00:00Z') / 1000;
const REPOSITORY: RepositoryTarget = {
  repo: { host: 'github.com', owner: 'acme', name: 'web' },
  name: 'github.com/acme/web',
  branches: ['main'],
  flakyTests: false,
};

export type Read = 'concluded entries' | 'testing results' | 'verification runs';

/** The reads besides the live list that the requests since `from` made, each as often as made. */
function readsSince(fake: FakeV2, from: number): Read[] {
  const reads: Read[] = [];
  for (const request of fake.requests.slice(from)) {
    const url = new URL(request.url, 'http://fake');
    if (url.pathname.endsWith('/testing-results')) reads.push('testing results');
    else if (url.pathname.endsWith('/verification-runs')) reads.push('verification runs');
    else if (url.searchParams.has('concludedAfter')) reads.push('concluded entries');
  }
  return reads.sort();
}

/** One queue polled through API v2 against the fake, its reads recorded poll by poll. */
export async function watchedQueue(
  rows: EntryRow[],
  options: { history?: boolean; logger?: Logger } = {},
) {
  const clock = { now: START };
  const now = () => clock.now;
  const fake = await startFakeWebQueue(rows);
  /** Calls the reads of the queue-entry histories made, each up to 50 pull requests. */
  let historyCalls = 0;
  /** Those of them answered (their read goes on from there at once). */
  let historyAnswers = 0;
  /** Reads of the queue-entry histories that failed (each told once, when it ended). */
  let historyFailures = 0;
  const config = exporterConfig(fake.origin, [REPOSITORY], {
    trunk: { apiKey: new Secret(API_KEY) },
  });
  const { client } = makeClient(fake.origin, {
    apiKey: new Secret(API_KEY),
    logger: options.logger ?? silentLogger(),
  });
  const v2 = new TrunkV2Client(client);
  const store = new SnapshotStore(config.polling.staleAfterSeconds, now);
  store.setTargets(configuredTargets(config));
  const [job] = buildPollJobs({
    config,
    reader: client,
    store,
    logger: options.logger ?? silentLogger(),
    now,
    v2: {
      reader: v2,
      directory: new V2QueueDirectory(v2, INTERVAL, now),
      tests: new V2TestDirectory({ lister: v2, maxAgeSeconds: 600, lookupsAtATime: 4 }, now),
      ...(options.history === true
        ? {
            history: new QueueEntryHistoryReads(
              {
                // Counted as the read makes it (before the client's retries), which is at once.
                listQueueEntryHistory: async (ids, readOptions) => {
                  historyCalls += 1;
                  const answer = await v2.listQueueEntryHistory(ids, readOptions);
                  historyAnswers += 1;
                  return answer;
                },
              },
              { maxAgeSeconds: INTERVAL, staleAfterSeconds: config.polling.staleAfterSeconds },
              now,
              () => {
                historyFailures += 1;
              },
            ),
          }
        : {}),
    },
  });
  if (job === undefined) throw new Error('no job');
  /** Polls at the clock's time (until `signal` aborts it); the reads the poll made. */
  const pollNow = async (signal = new AbortController().signal): Promise<Read[]> => {
    const from = fake.requests.length;
    await job.run(signal);
    return readsSince(fake, from);
  };
  /** Polls at the clock's time and moves the clock one interval on; the reads the poll made. */
  const poll = async (): Promise<Read[]> => {
    const reads = await pollNow();
    clock.now += INTERVAL;
    return reads;
  };
  return {
    fake,
    clock,
    store,
    poll,
    pollNow,
    historyCalls: () => historyCalls,
    historyAnswers: () => historyAnswers,
    historyFailures: () => historyFailures,
  };
}

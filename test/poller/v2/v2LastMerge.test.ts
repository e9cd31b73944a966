// The read of a merge queue's last merge through API v2, over real sockets against the simulator:
// windows widened until one holds a merge, each walked whole; an entry in the future not used; and
// one read when the queue's ledger starts, none on later polls.
import { afterEach, describe, expect, it } from 'vitest';
import { configuredTargets } from '../../../src/config/targets.js';
import { buildPollJobs } from '../../../src/poller/jobs/targetJobs.js';
import { readLastMergeV2 } from '../../../src/poller/v2/v2LastMerge.js';
import type { V2Readers } from '../../../src/poller/v2/v2Readers.js';
import { V2TestDirectory } from '../../../src/poller/v2/v2TestDirectory.js';
import { V2QueueDirectory } from '../../../src/poller/v2/v2QueueDirectory.js';
import { Secret } from '../../../src/secrets/secret.js';
import type { MergeQueueModel } from '../../../src/simulator/mergeQueueModel.js';
import { SnapshotStore } from '../../../src/snapshot/store.js';
import { TrunkV2Client } from '../../../src/trunk/v2Client.js';
import { exporterConfig } from '../../support/exporterConfig.js';
import { startTestSimulator } from '../../support/simulator.js';
import { TOKEN, capturingLogger, cleanUp, makeClient } from '../../trunk/harness.js';

afterEach(cleanUp);

const API_KEY = 'trunk_v2_last-merge-read-key';
const WEB = { repo: 'github.com/acme/web', branch: 'main' };

/** A frozen world's acme/web main through a v2 client that records each read's filter. */
async function v2Queue() {
  const { world, simulator } = await startTestSimulator({ seed: 5, token: TOKEN, apiKey: API_KEY });
  const { client } = makeClient(simulator.origin, {
    apiKey: new Secret(API_KEY),
    retry: { maxAttempts: 1 },
  });
  const v2 = new TrunkV2Client(client);
  const reads: { states: string; concludedAfter: string | undefined }[] = [];
  const reader: V2Readers['reader'] = {
    listQueuePullRequests(queue, filter, options) {
      reads.push({ states: filter.states?.join(',') ?? '', concludedAfter: filter.concludedAfter });
      return v2.listQueuePullRequests(queue, filter, options);
    },
    listTestingResults: (queue, since, options) => v2.listTestingResults(queue, since, options),
    listVerificationRuns: (queue, createdAfter, options) =>
      v2.listVerificationRuns(queue, createdAfter, options),
    getVerificationRun: (queue, id, options) => v2.getVerificationRun(queue, id, options),
    reportAnomaly: (endpoint, kind, count) => {
      v2.reportAnomaly(endpoint, kind, count);
    },
  };
  const directory = new V2QueueDirectory(v2, 30, () => world.now());
  const found = await directory.find(WEB, {});
  if (found === undefined) throw new Error('no queue');
  const model = world.mergeQueues.find(
    ({ repository, model: queue }) => repository.name === 'web' && queue.branch === 'main',
  )?.model;
  if (model === undefined) throw new Error('no queue model');
  return { world, simulator, v2, reader, reads, directory, model, queue: { id: found.id, ...WEB } };
}

/** Merge times of the queue's concluded PRs, latest first. */
function mergeTimes(model: MergeQueueModel): number[] {
  return model.concluded
    .filter((pr) => pr.state === 'merged')
    .map((pr) => pr.stateChangedAt)
    .sort((a, b) => b - a);
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

describe('the read of the last merge (API v2)', () => {
  it('widens its window until one holds a merge, and takes the latest merge of that window', async () => {
    const { world, reader, reads, model, queue } = await v2Queue();
    const [latest] = mergeTimes(model);
    if (latest === undefined) throw new Error('the world merged nothing');
    const { logger } = capturingLogger();
    const read = (now: number) => readLastMergeV2({ reader, queue, now, options: {}, logger });

    // Just after it: the last hour holds it.
    expect(await read(latest + 60)).toBe(latest);
    // Two hours later: the last hour holds none, the last day does.
    const later = latest + 7200;
    expect(await read(later)).toBe(latest);
    // After a week and a day: none.
    const muchLater = world.now() + 8 * 86_400;
    expect(await read(muchLater)).toBeUndefined();
    const [hour, day, week] = [3600, 86_400, 7 * 86_400];
    expect(reads).toEqual([
      { states: 'merged', concludedAfter: iso(latest + 60 - hour) },
      { states: 'merged', concludedAfter: iso(later - hour) },
      { states: 'merged', concludedAfter: iso(later - day) },
      { states: 'merged', concludedAfter: iso(muchLater - hour) },
      { states: 'merged', concludedAfter: iso(muchLater - day) },
      { states: 'merged', concludedAfter: iso(muchLater - week) },
    ]);
  });

  it('does not take a merge over a minute in the future of its clock', async () => {
    const { reader, model, queue } = await v2Queue();
    const [latest] = mergeTimes(model);
    if (latest === undefined) throw new Error('the world merged nothing');
    // A clock a minute and a second before the latest merge: the one before it is the last.
    const now = latest - 61;
    const earlier = mergeTimes(model).find((at) => at <= now + 60);
    if (earlier === undefined) throw new Error('the world merged once');
    const { logger } = capturingLogger();
    expect(await readLastMergeV2({ reader, queue, now, options: {}, logger })).toBe(earlier);
  });

  it('is made once, when the queue is first polled: later polls read no more', async () => {
    const { world, simulator, v2, reader, reads, directory, model } = await v2Queue();
    const config = exporterConfig(
      simulator.origin,
      [
        {
          repo: { host: 'github.com', owner: 'acme', name: 'web' },
          name: WEB.repo,
          branches: [WEB.branch],
          flakyTests: false,
        },
      ],
      { trunk: { apiKey: new Secret(API_KEY) } },
    );
    const now = () => world.now();
    const store = new SnapshotStore(config.polling.staleAfterSeconds, now);
    store.setTargets(configuredTargets(config));
    const [job] = buildPollJobs({
      config,
      reader: makeClient(simulator.origin).client,
      store,
      logger: capturingLogger().logger,
      now,
      v2: {
        reader,
        directory,
        tests: new V2TestDirectory({ lister: v2, maxAgeSeconds: 600, lookupsAtATime: 4 }, now),
      },
    });
    if (job === undefined) throw new Error('no job');
    for (let poll = 0; poll < 5; poll++) await job.run(new AbortController().signal);
    expect(reads.filter((read) => read.states === 'merged')).toHaveLength(1);
    expect(store.queueFlow({ kind: 'merge_queue', ...WEB })?.lastMergeAt).toBe(
      mergeTimes(model)[0],
    );
  });
});

// Eviction loops against the simulator's truth: the demo's world (whose incident cycle evicts one
// pull request of acme/api main four times in a row) polled by two real exporters, one through
// API v1 and one through API v2, while the world moves ten seconds at a time. The truth is what
// the model's queue entries concluded, by Trunk's definition of an eviction loop: a pull request
// whose queue entry concluded `failed` ("Terminal — verification or the merge itself failed") at
// least twice within a day; each such conclusion after its first is one more. Failed testing
// attempts of an entry that stays in the queue (a retest after a `pendingFailure`, the other pull
// requests of a split batch) are not conclusions, so they are no part of it.
import { describe, expect, it } from 'vitest';
import { createDemoWorld } from '../src/demo/demo.js';
import { repositoryKey } from '../src/simulator/repositories.js';
import type { SimulatedPullRequest } from '../src/simulator/pullRequest.js';
import { sum, type Sample } from './support/exposition.js';
import {
  configYaml,
  startTestExporter,
  type ExporterUnderTest,
} from './support/exporterHarness.js';
import { startTestSimulator } from './support/simulator.js';

const TOKEN = 'sim-token-evictions';
const API_KEY = 'trunk_v2_evictions-truth-key';
const REPO = 'github.com/acme/api';
const BRANCH = 'main';
const DAY = 86_400;
const REPEATED = 'trunk_merge_queue_repeated_failures_total';

describe('eviction loops against the simulator', () => {
  it('are the failed conclusions of a pull request within a day of its previous one, through API v1 and v2 alike', async () => {
    const startTime = Math.floor(Date.now() / 1000);
    const { world } = createDemoWorld(11, startTime);
    const { simulator } = await startTestSimulator({ world, token: TOKEN, apiKey: API_KEY });
    const exporter = (credentials: { token: string | null; apiKey?: string }) =>
      startTestExporter(
        configYaml({
          apiUrl: simulator.origin,
          ...credentials,
          targets: `  - repo: ${REPO}\n    branches: [${BRANCH}]`,
          polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
        }),
      );
    const v1 = await exporter({ token: TOKEN });
    const v2 = await exporter({ token: null, apiKey: API_KEY });
    const queue = world.mergeQueues.find(
      ({ repository, model }) => repositoryKey(repository) === REPO && model.branch === BRANCH,
    )?.model;
    if (queue === undefined) throw new Error(`no queue ${REPO} ${BRANCH}`);

    /** Failed conclusions after the exporters' first polls, each within a day of the PR's previous. */
    const truth = () => {
      const prs = new Set<SimulatedPullRequest>([...queue.active, ...queue.concluded]);
      let repeated = 0;
      for (const pr of prs) {
        let previous: number | undefined;
        for (const { state, at } of pr.conclusions) {
          if (state !== 'failed' || at <= startTime) continue;
          if (previous !== undefined && at - previous <= DAY) repeated += 1;
          previous = at;
        }
      }
      return repeated;
    };
    const counted = (samples: readonly Sample[]) =>
      sum(samples, REPEATED, { repo: REPO, branch: BRANCH });
    const lastSuccess = (samples: readonly Sample[]) =>
      sum(samples, 'trunk_exporter_last_success_timestamp_seconds', { repo: REPO, branch: BRANCH });
    /** Until a poll that began after now has ended: the one after a poll that ended after now. */
    const pollAfterNow = async (polled: ExporterUnderTest) => {
      const now = Date.now() / 1000;
      let ended = 0;
      await polled.waitFor((samples) => (ended = lastSuccess(samples)) > now, 'a poll ending');
      return polled.waitFor((samples) => lastSuccess(samples) > ended, 'a poll beginning');
    };
    // Twenty seconds at a time, each polled by both before the next: every state that lasts that
    // long is seen (a failed one lasts 30 s before the incident's resubmission, minutes otherwise).
    for (let seconds = 0; seconds <= 600; seconds += 20) {
      world.advance(startTime + seconds);
      const pages = await Promise.all([v1, v2].map(pollAfterNow));
      expect(pages.map(counted), `${seconds} s`).toEqual([truth(), truth()]);
    }
    // The incident's pull request failed four times in a row, each within minutes: three repeats.
    expect(truth()).toBeGreaterThanOrEqual(3);
  });
});

// Eviction loops against the simulator's truth: the demo's world (whose incident cycle evicts one
// pull request of acme/api main four times in a row) polled by two real exporters, one through
// API v1 and one through API v2, while the world moves twenty seconds at a time. The truth is what
// the model's queue entries concluded, by Trunk's definition of an eviction loop: a pull request
// whose queue entry concluded `failed` ("Terminal — verification or the merge itself failed") at
// least twice within a day; each such conclusion after its first is one more. Failed testing
// attempts of an entry that stays in the queue (a retest after a `pendingFailure`, the other pull
// requests of a split batch) are not conclusions, so they are no part of it.
//
// The model's draws hash the time, so each start time is another world around the same incident;
// those below are a few seconds apart and each draws a different one. The exporters' clock starts
// at the first and runs in real time, so Trunk's clock (the world's) runs ahead of theirs by up to
// ten minutes by the end: a conclusion dated ahead still counts once (docs/operations.md).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDemoWorld } from '../src/demo/demo.js';
import { repositoryKey } from '../src/simulator/repositories.js';
import type { SimulatedPullRequest } from '../src/simulator/pullRequest.js';
import type { SimulatorWorld } from '../src/simulator/world.js';
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

/** Unix seconds from 2026-11-28T10:16:30Z, each a world of its own (what else concludes, and when). */
const START_TIMES = [
  // PRs merged at 115 s and 390 s.
  1_795_860_990,
  // Another PR failed at 125 s.
  1_795_860_991,
  // One PR cancelled at 505 s: the read it brings lists the incident's PR, failed at 490 s and
  // resubmitted at 520 s, in `notReady` (counted twice while Trunk's clock, ahead of the
  // exporter's, was compared with the poll's).
  1_795_860_997,
  // One PR cancelled at 490 s, as the incident's PR fails.
  1_795_861_001,
];

afterEach(() => {
  vi.useRealTimers();
});

/** A world from `startTime`, its simulator, and an exporter polling acme/api main through each API. */
async function pollTheWorld(startTime: number) {
  const { world } = createDemoWorld(11, startTime);
  const { simulator } = await startTestSimulator({ world, token: TOKEN, apiKey: API_KEY });
  const exporter = (credentials: { token: string | null; apiKey?: string }) =>
    startTestExporter(
      configYaml({
        apiUrl: simulator.origin,
        ...credentials,
        targets: `  - repo: ${REPO}\n    branches: [${BRANCH}]`,
        polling: '  mergeQueueIntervalSeconds: 0.1\n  flakyTestsIntervalSeconds: 600',
      }),
    );
  const exporters = [
    await exporter({ token: TOKEN }),
    await exporter({ token: null, apiKey: API_KEY }),
  ];
  return { startTime, world, exporters, truth: repeatedFailures(world, startTime) };
}

/** Failed conclusions after `startTime`, each within a day of the PR's previous one. */
function repeatedFailures(world: SimulatorWorld, startTime: number): () => number {
  const queue = world.mergeQueues.find(
    ({ repository, model }) => repositoryKey(repository) === REPO && model.branch === BRANCH,
  )?.model;
  if (queue === undefined) throw new Error(`no queue ${REPO} ${BRANCH}`);
  return () => {
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
}

const counted = (samples: readonly Sample[]) =>
  sum(samples, REPEATED, { repo: REPO, branch: BRANCH });

/**
 * Until a poll that began after now has ended: the one after a poll that ended after now; then
 * the page. The exporter's store tells each poll's end as it is written, so eight exporters are
 * not scraped every 50 ms while they poll.
 */
async function pollAfterNow(polled: ExporterUnderTest): Promise<Sample[]> {
  const now = Date.now() / 1000;
  let ended: number | undefined;
  let unsubscribe: () => void = () => undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error('timed out waiting for a poll beginning after now'));
      }, 20_000);
      unsubscribe = polled.exporter.store.subscribe((_key, status) => {
        const at = status?.lastSuccessAt;
        if (at === undefined || at <= (ended ?? now)) return;
        if (ended === undefined) {
          ended = at;
        } else {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  } finally {
    unsubscribe();
  }
  return polled.samples();
}

describe('eviction loops against the simulator', () => {
  it('are the failed conclusions of a pull request within a day of its previous one, through API v1 and v2 alike', async () => {
    vi.useFakeTimers({
      toFake: ['Date'],
      shouldAdvanceTime: true,
      now: Math.min(...START_TIMES) * 1000,
    });
    const worlds = await Promise.all(START_TIMES.map(pollTheWorld));
    // Twenty seconds at a time, each polled by both before the next: every state that lasts that
    // long is seen (a failed one lasts 30 s before the incident's resubmission, minutes otherwise).
    for (let seconds = 0; seconds <= 600; seconds += 20) {
      for (const { world, startTime } of worlds) world.advance(startTime + seconds);
      const pages = await Promise.all(
        worlds.map(({ exporters }) => Promise.all(exporters.map(pollAfterNow))),
      );
      for (const [index, { startTime, truth }] of worlds.entries()) {
        const repeated = truth();
        expect(
          pages[index]?.map(counted),
          `start time ${String(startTime)}, ${String(seconds)} s`,
        ).toEqual([repeated, repeated]);
      }
    }
    // The eviction loop's pull request fails again and again within minutes (the failing e2e check
    // of the same queue's runs meanwhile may end a try first): loops happened in every world.
    for (const { truth } of worlds) expect(truth()).toBeGreaterThanOrEqual(2);
    // Four worlds polled at once take about 10 s on an idle machine: a busy one gets more time.
  }, 120_000);
});

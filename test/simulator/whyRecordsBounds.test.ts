// What the queue model keeps of why its entries moved stays bounded as the demo runs for days:
// transitions per entry (a cap and an age), entries no longer remembered forgotten, and runs (a cap
// and an age, as the testing results).
import { describe, expect, it } from 'vitest';
import {
  createEntryHistory,
  ENTRY_HISTORY_SECONDS,
  ENTRY_HISTORY_TRANSITIONS,
} from '../../src/simulator/entryHistory.js';
import { createRandom } from '../../src/simulator/random.js';
import {
  createVerificationRuns,
  VERIFICATION_RUN_SECONDS,
  VERIFICATION_RUNS,
} from '../../src/simulator/verificationRuns.js';
import { createSimulatorWorld } from '../../src/simulator/world.js';
import { getPage, startV2Simulator } from './v2Harness.js';

const DAY = 86_400;

describe('the records of a queue', () => {
  it(`keep ${ENTRY_HISTORY_TRANSITIONS} transitions of an entry, none older than 45 days`, () => {
    expect(ENTRY_HISTORY_SECONDS).toBe(45 * DAY);
    const world = createSimulatorWorld({ seed: 4 });
    const pr = world.mergeQueues[0]?.model.submit(world.now());
    if (pr === undefined) throw new Error('no queue');
    const history = createEntryHistory();
    for (let at = 1; at <= ENTRY_HISTORY_TRANSITIONS + 20; at++) {
      history.record(pr, 'pending', at * 60, { reason: 'TESTS_RESTARTED_BY_USER' });
    }
    const kept = history.timeline(pr.id)?.transitions ?? [];
    expect(kept.length).toBe(ENTRY_HISTORY_TRANSITIONS);
    // The oldest went first; each keeps its place in the timeline.
    expect([kept[0]?.at, kept[0]?.sequence]).toEqual([21 * 60, 21]);
    history.record(pr, 'cancelled', 46 * DAY, { reason: 'PR_CLOSED' });
    expect(history.timeline(pr.id)?.transitions.map((t) => t.sequence)).toEqual([
      ENTRY_HISTORY_TRANSITIONS + 21,
    ]);
    history.forget(pr);
    expect(history.timeline(pr.id)).toBeUndefined();
  });

  it(`keep ${VERIFICATION_RUNS} runs, none concluded more than 45 days ago, none in progress dropped`, () => {
    expect(VERIFICATION_RUN_SECONDS).toBe(45 * DAY);
    const world = createSimulatorWorld({ seed: 4 });
    const queue = world.mergeQueues[0]?.model;
    if (queue === undefined) throw new Error('no queue');
    const runs = createVerificationRuns({ random: createRandom(1), failingCheck: () => undefined });
    const hung = queue.submit(world.now());
    hung.testingRun = { batch: 0, isBisection: false };
    runs.start(hung, 0, ['ci/build'], []);
    const pr = queue.submit(world.now());
    for (let batch = 1; batch <= VERIFICATION_RUNS + 20; batch++) {
      pr.testingRun = { batch, isBisection: false };
      runs.start(pr, batch * 60, ['ci/build'], []);
      runs.end(pr, 'passed', batch * 60 + 30);
    }
    expect(runs.runs.length).toBe(VERIFICATION_RUNS);
    // The run in progress stays; the oldest concluded ones went.
    expect(runs.runs.map((run) => run.batch).slice(0, 2)).toEqual([0, 22]);
    pr.testingRun = { batch: 5000, isBisection: false };
    runs.start(pr, 46 * DAY, ['ci/build'], []);
    expect(runs.runs.map((run) => run.batch)).toEqual([0, 5000]);
    expect(runs.run(22)).toBeUndefined();
  });

  it('forget the timeline of a pull request the queue no longer remembers', async () => {
    const world = createSimulatorWorld({ seed: 13 });
    const first = new Map<string, number>();
    world.subscribe((event) => {
      if (event.kind === 'pull_request') first.set(event.pr.id, event.pr.number);
    });
    world.advance(world.now() + 600);
    const early = [...first.keys()];
    world.advance(world.now() + 3 * DAY);
    const simulator = await startV2Simulator({ world });
    const forgotten = early.filter(
      (id) => !world.mergeQueues.some(({ model }) => model.find(first.get(id) ?? 0)?.id === id),
    );
    expect(forgotten.length).toBeGreaterThan(0);
    // "An id naming a pull request … that was never enqueued, comes back as an empty group": the
    // simulator answers so for one it no longer remembers.
    const groups = await getPage(
      simulator,
      `/v2/queue-entry-history?pullRequestIds=${forgotten.slice(0, 50).join(',')}&limit=50`,
    );
    expect(groups.data.map((group) => group.transitions)).toEqual(
      forgotten.slice(0, 50).map(() => []),
    );
  });
});

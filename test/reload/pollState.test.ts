// What a target's polls have learned survives a reload that keeps the target: a real exporter
// polls a real simulator whose world stands still, and the PR lookups are counted where they
// arrive. A reload that only changes the poll interval must not cost a cycle of lookups.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/server.js';
import {
  configYaml,
  startFrozenSimulator,
  startTestExporter,
  type ExporterUnderTest,
} from '../support/exporterHarness.js';

const WEB = '  - repo: github.com/acme/web\n    branches: [main]';
const GET_QUEUE = '/v1/getQueue';
const LOOKUP = '/v1/getSubmittedPullRequest';
/** No recheck falls due within the test: in a world that stands still, lookups are what was forgotten. */
const polling = (intervalSeconds: number) =>
  `  mergeQueueIntervalSeconds: ${intervalSeconds}\n  flakyTestsIntervalSeconds: 600\n` +
  '  pullRequestRecheckSeconds: 1000000000';

/** PR lookups made during the next `cycles` complete polls of the one queue. */
async function lookupsOver(simulator: RunningSimulator, cycles: number): Promise<number> {
  const counts = () => simulator.requestCounts();
  const lookupsBefore = counts()[LOOKUP] ?? 0;
  const queuesBefore = counts()[GET_QUEUE] ?? 0;
  // Polls of one target never overlap: getQueue number n + 1 arrives after poll n has finished.
  await vi.waitFor(
    () => {
      expect(counts()[GET_QUEUE]).toBeGreaterThanOrEqual(queuesBefore + cycles + 1);
    },
    { timeout: 15_000, interval: 20 },
  );
  return (counts()[LOOKUP] ?? 0) - lookupsBefore;
}

function webFlow(run: ExporterUnderTest) {
  const status = run.exporter.store.statuses().find((each) => each.target.branch === 'main');
  return status?.queueFlow;
}

describe('poll state across a reload', () => {
  it('keeps PR lookup memory and the flow ledger when only the interval changes', async () => {
    const { simulator } = await startFrozenSimulator('documented');
    const file = join(await mkdtemp(join(tmpdir(), 'trunk-exporter-poll-state-')), 'config.yaml');
    const yaml = (interval: number) =>
      configYaml({ apiUrl: simulator.baseUrl, targets: WEB, polling: polling(interval) });
    await writeFile(file, yaml(0.3));
    const run = await startTestExporter(yaml(0.3), 'info', file);
    await run.waitUntilReady();
    // The documented shape has no state in queue items: the first poll looks up every PR.
    const firstPoll = simulator.requestCounts()[LOOKUP] ?? 0;
    expect(firstPoll).toBeGreaterThan(0);
    const steadyState = await lookupsOver(simulator, 2);
    const ledger = webFlow(run);
    expect(ledger?.tracked.size).toBeGreaterThan(0);

    await writeFile(file, yaml(0.25));
    expect((await run.exporter.reload('SIGHUP')).message).toBe(
      'configuration reloaded: 0 targets added, 0 removed; ' +
        'settings changed: polling.mergeQueueIntervalSeconds',
    );
    const afterReload = await lookupsOver(simulator, 2);

    expect({ firstPoll, steadyState, afterReload }).toEqual({
      firstPoll,
      steadyState,
      afterReload: expect.toSatisfy((lookups: number) => lookups <= steadyState) as number,
    });
    // The ledger carried on: a queue's state seconds add up every gap between its polls since the
    // first, so they grew by exactly the time between the two ledgers' last polls. A ledger begun
    // anew would count nothing for its first poll, and less in all.
    const stateSeconds = (flow: typeof ledger) =>
      [...(flow?.counts.queueStateSeconds.values() ?? [])].reduce(
        (sum, seconds) => sum + seconds,
        0,
      );
    const later = webFlow(run);
    expect(stateSeconds(ledger)).toBeGreaterThan(0);
    expect(stateSeconds(later) - stateSeconds(ledger)).toBeCloseTo(
      (later?.lastPollAt ?? 0) - (ledger?.lastPollAt ?? 0),
      6,
    );
  });
});

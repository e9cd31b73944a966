// trunk_merge_queue_oldest_pull_request_number end to end: exporters reading the same frozen
// simulator world through API v1 and through API v2 each name, per queue and state, the pull
// request the world itself has had in that state longest.
import { describe, expect, it } from 'vitest';
import type { SimulatedPullRequest } from '../src/simulator/pullRequest.js';
import { repositoryKey } from '../src/simulator/repositories.js';
import type { SimulatorWorld } from '../src/simulator/world.js';
import { select, type Sample } from './support/exposition.js';
import { SIMULATOR_TOKEN, configYaml, startTestExporter } from './support/exporterHarness.js';
import { startTestSimulator } from './support/simulator.js';

const API_KEY = 'trunk_v2_oldest-pr-key-5e0';
const FAMILY = 'trunk_merge_queue_oldest_pull_request_number';

const TARGETS = [
  '  - repo: github.com/acme/web',
  '    branches: [main, release]',
  '  - repo: github.com/acme/api',
  '    branches: [main]',
  '  - repo: github.com/acme/mobile',
  '    branches: [develop]',
].join('\n');

/**
 * Per queue and state, the number of the world's PR longest in that state: the earliest state
 * change, of equal ones the lowest number; with how many PRs shared that earliest change.
 */
function truth(world: SimulatorWorld): { series: Map<string, number>; ties: number } {
  const series = new Map<string, number>();
  let ties = 0;
  for (const { repository, model } of world.mergeQueues) {
    const byState = new Map<string, SimulatedPullRequest[]>();
    for (const pr of model.active) byState.set(pr.state, [...(byState.get(pr.state) ?? []), pr]);
    for (const [state, prs] of byState) {
      const earliest = Math.min(...prs.map((pr) => pr.stateChangedAt));
      const oldest = prs.filter((pr) => pr.stateChangedAt === earliest);
      if (oldest.length > 1) ties++;
      series.set(
        `${repositoryKey(repository)} ${model.branch} ${state}`,
        Math.min(...oldest.map((pr) => pr.number)),
      );
    }
  }
  return { series, ties };
}

function exported(samples: readonly Sample[]): Map<string, number> {
  return new Map(
    select(samples, FAMILY).map(({ labels, value }) => [
      `${labels.repo} ${labels.branch} ${labels.state}`,
      value,
    ]),
  );
}

describe('trunk_merge_queue_oldest_pull_request_number', () => {
  it("names the world's longest-waiting PR of each state, through API v1 and API v2", async () => {
    const { world, simulator } = await startTestSimulator({
      seed: 19,
      token: SIMULATOR_TOKEN,
      apiKey: API_KEY,
    });
    world.advance(world.now() + 3600);
    // Two PRs submitted at once are not_ready since the same instant; where no other PR is
    // not_ready, the lower number must be named, whichever order the API lists them in.
    for (const { model } of world.mergeQueues) {
      if (model.active.every((pr) => pr.state !== 'not_ready')) {
        model.submit(world.now());
        model.submit(world.now());
      }
    }
    const expected = truth(world);
    expect(expected.ties).toBeGreaterThan(0);
    expect(expected.series.size).toBeGreaterThan(8);
    for (const credentials of [
      { token: SIMULATOR_TOKEN },
      { token: null, apiKey: API_KEY },
    ] as const) {
      const exporter = await startTestExporter(
        configYaml({ apiUrl: simulator.origin, ...credentials, targets: TARGETS }),
      );
      await exporter.waitUntilReady();
      expect(exported(await exporter.samples()), JSON.stringify(credentials)).toEqual(
        expected.series,
      );
      await exporter.stop();
    }
  });
});

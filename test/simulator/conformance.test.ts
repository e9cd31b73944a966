// The simulator's v2 answers against Trunk's published definition: the shared checker
// (../shared/tools/check-v2-conformance.mjs) reads every queue, pull request, repository, test,
// testing result, verification run, queue-entry history and test collection of a simulator moving
// on the wall clock, then the error cases, and validates each body against the schema the
// definition declares. With `--all` every read it knows must be served. It must find no mismatch,
// in either flavour. Without the checker beside the repository the test skips, unless
// REQUIRE_SYSTEM_BINARIES=1 (CI), where its absence fails.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SimulatorFlavour } from '../../src/simulator/responses.js';
import { startSimulatorServer } from '../../src/simulator/server.js';
import { createSimulatorWorld } from '../../src/simulator/world.js';
import { REPOSITORY_ROOT, runNode } from '../support/nodeProcess.js';

const CHECKER = join(REPOSITORY_ROOT, '..', 'shared', 'tools', 'check-v2-conformance.mjs');
const API_KEY = 'trunk_v2_conformance-key';

/** The checker's path, or undefined (the tests skip) when it is not beside the repository. */
function checker(): string | undefined {
  if (existsSync(CHECKER)) return CHECKER;
  const message = `the v2 conformance checker is not at ${CHECKER} (shared/ beside the repository)`;
  if (process.env.REQUIRE_SYSTEM_BINARIES === '1') throw new Error(message);
  console.warn(`skipping: ${message}`);
  return undefined;
}

const script = checker();

/** Runs the checker against a simulator of `flavour` that follows the wall clock. */
async function check(flavour: SimulatorFlavour) {
  const world = createSimulatorWorld({ seed: 7, flavour, startTime: Date.now() / 1000 });
  const simulator = await startSimulatorServer({
    world,
    token: 'conformance-token',
    apiKey: API_KEY,
    autoAdvance: { tickMs: 1000 },
  });
  try {
    return await runNode([
      script ?? CHECKER,
      '--base',
      simulator.origin,
      '--key',
      API_KEY,
      '--all',
    ]);
  } finally {
    await simulator.close();
  }
}

// Each case waits on the checker's child process (it pauses 5 s between its two reads).
describe.skipIf(script === undefined)('v2 conformance with the published definition', () => {
  it.concurrent.each(['documented', 'live'] as const)(
    'finds no mismatch in the %s flavour',
    async (flavour) => {
      const { code, stdout, stderr } = await check(flavour);
      expect(stdout.split('\n').filter((line) => line.startsWith('x '))).toEqual([]);
      expect(stdout).toMatch(/v2 conformance: PASS \(0 mismatches in \d+ responses\)/);
      // Served, not noted as missing: every read the checker knows.
      expect(stdout).not.toContain('not served');
      expect(stdout).not.toContain('lacks');
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    },
    60_000,
  );
});

// A Trunk API simulator of a given scale in its own process, so that its CPU and memory never count
// as the exporter's. Prints "READY <baseUrl>" once listening (v1 under it, v2 beside it at
// <origin>/v2 for BENCH_API_KEY); runs until killed. With `control`, it takes commands on stdin.
import { createInterface } from 'node:readline';
import type * as ServerModule from '../../src/simulator/server.js';
import type * as WorldModule from '../../src/simulator/world.js';
import { loadBuilt } from './built.ts';
import { BENCH_API_KEY, BENCH_TOKEN, simulatedRepositories, type Scale } from './scale.ts';

/** What the parent asks for, as JSON in argv[2]. */
export interface SimulatorProcessSpec {
  readonly scale: Scale;
  readonly flavour: 'documented' | 'live';
  readonly latencyMs: number;
  readonly churn: 'normal' | 'heavy';
  /** Moves the world on by itself: simulated seconds every tickMs, until SIGUSR2 freezes it. */
  readonly advance?: { readonly tickMs: number; readonly secondsPerTick: number };
  /**
   * The world starts now and follows the wall clock (every second), so the timestamps it answers
   * with are the exporter's present: what API v2's reads since the exporter's start need to count.
   */
  readonly wallClock?: boolean | undefined;
  /**
   * Commands on stdin, one a line, each answered on stdout: `advance <seconds>` moves the world on
   * by that much and prints `NOW <unix seconds>`; `counts` prints `COUNTS <json>`, the requests by
   * endpoint since the last `counts`, and starts counting again.
   */
  readonly control?: boolean | undefined;
}

const spec = JSON.parse(process.argv[2] ?? '{}') as SimulatorProcessSpec;
const { createSimulatorWorld } = await loadBuilt<typeof WorldModule>('simulator/world.js');
const { startSimulatorServer } = await loadBuilt<typeof ServerModule>('simulator/server.js');
const world = createSimulatorWorld({
  seed: 1,
  flavour: spec.flavour,
  repositories: simulatedRepositories(spec.scale),
  churn: spec.churn,
  ...(spec.wallClock === true ? { startTime: Date.now() / 1000 } : {}),
  // Ten minutes are enough to mix pull request states; two hours of 1,000 queues take minutes.
  warmUpSeconds: 600,
});
const simulator = await startSimulatorServer({
  world,
  token: BENCH_TOKEN,
  apiKey: BENCH_API_KEY,
  latencyMs: spec.latencyMs,
});
if (spec.wallClock === true) {
  setInterval(() => {
    world.advance(Date.now() / 1000);
  }, 1000);
}
const advance = spec.advance;
if (advance !== undefined) {
  let simulated = world.now();
  const timer = setInterval(() => {
    simulated += advance.secondsPerTick;
    world.advance(simulated);
  }, advance.tickMs);
  // A soak run freezes the world at the end, to compare the exporter with what it holds then.
  process.on('SIGUSR2', () => {
    clearInterval(timer);
    process.stdout.write('FROZEN\n');
  });
}
if (spec.control === true) {
  createInterface({ input: process.stdin }).on('line', (line) => {
    const [command, argument] = line.split(' ');
    if (command === 'advance') {
      world.advance(world.now() + Number(argument));
      process.stdout.write(`NOW ${world.now()}\n`);
    } else if (command === 'counts') {
      process.stdout.write(`COUNTS ${JSON.stringify(simulator.requestCounts())}\n`);
      simulator.resetRequestCounts();
    }
  });
}
process.stdout.write(`READY ${simulator.baseUrl}\n`);
// A parent killed without stopping us (Ctrl-C on a soak run) must not leave a simulator behind.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 1000).unref();
process.on('SIGTERM', () => {
  void simulator.close().then(() => process.exit(0));
});

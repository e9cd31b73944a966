// `node scripts/bench/steadyMemory.ts [seconds]`: only the memory benchmark's steady-state run (1,000
// merge-queue targets, production intervals, scraped every 15 s, the image's malloc settings)
// against this checkout's dist/, printed rather than written to docs/benchmarks.md. For comparing
// two builds: run one in each worktree at the same time, since the machine's load moves the figures.
import { imageEnvironment, measureSteadyState } from './memory.ts';
import { megabytes } from './stats.ts';

const seconds = Number(process.argv[2] ?? 180);
const figures = await measureSteadyState(
  { queues: 1000, pullRequestsPerQueue: 30, flakyRepositories: 50, quarantinedTests: 2000 },
  seconds,
  imageEnvironment(),
);
console.log(
  `steady state, ${String(seconds)} s, ${String(figures.samples)} samples: median ${megabytes(figures.median)}, ` +
    `min ${megabytes(figures.min)}, max ${megabytes(figures.max)}, peak ${megabytes(figures.peak)}`,
);

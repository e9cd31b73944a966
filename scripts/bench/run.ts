// `npm run bench`: runs every benchmark module in turn and writes docs/benchmarks.md.
// `--quick` runs each at a small size, to check that the whole chain works (the report then says so).
import './exporterV8Flags.ts';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem, type as osType, release } from 'node:os';
import { dirname, join } from 'node:path';
import * as apiCallsV1V2 from './apiCallsV1V2.ts';
import * as apiEconomy from './apiEconomy.ts';
import { ROOT } from './built.ts';
import * as cycleTime from './cycleTime.ts';
import * as load from './load.ts';
import * as memory from './memory.ts';
import * as pageCost from './pageCost.ts';
import * as scrape from './scrape.ts';
import { format, progress } from './stats.ts';

/** What every benchmark module exports. */
interface Benchmark {
  run(options: { quick: boolean }): Promise<{ title: string; markdown: string }>;
}

const BENCHMARKS: readonly (readonly [string, Benchmark])[] = [
  ['apiEconomy', apiEconomy],
  ['apiCallsV1V2', apiCallsV1V2],
  ['cycleTime', cycleTime],
  ['scrape', scrape],
  ['memory', memory],
  ['pageCost', pageCost],
  ['load', load],
];

const quick = process.argv.includes('--quick');
const only = process.argv
  .find((argument) => argument.startsWith('--only='))
  ?.slice('--only='.length);
const output = join(ROOT, quick ? 'reports/benchmarks-quick.md' : 'docs/benchmarks.md');

const sections: string[] = [];
const started = Date.now();
for (const [name, benchmark] of BENCHMARKS) {
  if (only !== undefined && !only.split(',').includes(name)) continue;
  progress(`${name}: starting`);
  const sectionStarted = Date.now();
  const { title, markdown } = await benchmark.run({ quick });
  sections.push(`## ${title}\n\n${markdown}\n`);
  progress(`${name}: done in ${format((Date.now() - sectionStarted) / 1000, 0)} s`);
}

// Written by scripts that need a second checkout beside this one (pairedCycle.ts,
// scrapeSideBySide.ts) or node's --expose-gc (replayMemory.ts): kept as they are.
const KEPT_SECTIONS = [
  '## Poll path beside commit 9bea266',
  '## Reads as data beside commit e7b9981',
  '## Scrape path side by side',
  '## Webhook replay memory',
];
const previous = existsSync(output) ? readFileSync(output, 'utf8') : '';
for (const heading of KEPT_SECTIONS) {
  const at = previous.indexOf(heading);
  if (at < 0) continue;
  const end = previous.indexOf('\n## ', at + 1);
  sections.push(previous.slice(at, end < 0 ? undefined : end + 1).trimEnd() + '\n');
}

const cpuList = cpus();
const report = [
  '# Benchmarks',
  '',
  `Written by \`npm run bench${quick ? ' -- --quick' : ''}\` (\`scripts/bench/run.ts\`) on ${new Date().toISOString().slice(0, 10)}, in ${format((Date.now() - started) / 1000)} s.${quick ? ' **Quick mode: small sizes, single runs; not the figures to quote.**' : ''}`,
  '',
  `Machine: ${cpuList[0]?.model ?? 'unknown CPU'}, ${cpuList.length} logical CPUs, ${format(totalmem() / 2 ** 30, 1)} GiB RAM, ${osType()} ${release()}, Node.js ${process.version}.`,
  '',
  ...sections,
].join('\n');
mkdirSync(dirname(output), { recursive: true });
writeFileSync(output, report);
progress(`wrote ${output}`);

// Benchmark figures have one home, docs/benchmarks.md, which `npm run bench` writes: no other page
// (nor the example config, nor the chart's values comments) quotes a measurement that would drift
// from the next run. A figure is recognised by its shape: megabytes, a decimal ratio, a percentage
// saved, scrapes or requests counted, a latency percentile, a run's duration.
import { describe, expect, it } from 'vitest';
import { pagePaths, readPage } from './pages.js';

const MEASUREMENTS: readonly RegExp[] = [
  /\d[\d,.]* ?[MGK]B\b/,
  /\d\.\d+ ?×/,
  // An assumption ("an assumed 10 % of polls") is a parameter, not a measurement.
  /(?<!assumed )(?<![\d.])\d[\d.]* ?% (?:fewer|less|more|lower|higher|of)\b/,
  /\d[\d,]* (?:scrapes|requests a second)\b/,
  /\bp(?:50|90|95|99) (?:of )?\d/,
  /\babout \d+ (?:minutes|seconds)\b/,
];

const SOURCES = [
  ...pagePaths().filter((path) => path !== 'docs/benchmarks.md'),
  'config.example.yaml',
  'helm/trunk-exporter/values.yaml',
];

describe('benchmark figures', () => {
  it('appear only in docs/benchmarks.md', () => {
    const quoted: string[] = [];
    for (const path of SOURCES) {
      readPage(path)
        .split('\n')
        .forEach((line, index) => {
          const pattern = MEASUREMENTS.find((measurement) => measurement.test(line));
          if (pattern) quoted.push(`${path}:${index + 1}: ${pattern.exec(line)?.[0]}`);
        });
    }
    expect(quoted).toEqual([]);
  });
});

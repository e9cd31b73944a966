// The command-line table of docs/configuration.md is checked against the parser: it names every
// flag of `trunk-exporter` and `trunk-exporter simulate` and no other, as --help does, and the
// log levels the parser accepts; --help says, as the table does, how many problems --check-config
// lists.
import { describe, expect, it } from 'vitest';
import { EXPORTER_OPTIONS, SIMULATE_OPTIONS, USAGE } from '../../src/cli/arguments.js';
import { LOG_LEVELS } from '../../src/log/logger.js';
import { pageSection } from './pages.js';

const section = () => pageSection('docs/configuration.md', '## Command line');
const flagsIn = (text: string) => new Set([...text.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]));
const parserFlags = new Set([...Object.keys(EXPORTER_OPTIONS), ...Object.keys(SIMULATE_OPTIONS)]);

describe('the command-line table of docs/configuration.md', () => {
  it('names every flag the parser accepts, and no other', () => {
    expect([...flagsIn(section())].sort()).toEqual([...parserFlags].sort());
  });

  it('agrees with --help, which names the same flags', () => {
    expect([...flagsIn(USAGE)].sort()).toEqual([...parserFlags].sort());
  });

  it('says as --help does how many problems --check-config prints', () => {
    const row = section()
      .split('\n')
      .find((line) => line.startsWith('| `trunk-exporter --check-config'));
    const listed = /the first (\d+) in file order/.exec(row ?? '')?.[1];
    expect(listed).toBeDefined();
    const help = USAGE.replace(/\s+/g, ' ');
    const checkConfig = help.slice(help.indexOf('trunk-exporter --check-config'));
    expect(checkConfig.slice(0, checkConfig.indexOf('trunk-exporter --demo'))).toContain(
      `the first ${listed}`,
    );
  });

  it('lists the log levels the parser accepts', () => {
    const row = section()
      .split('\n')
      .find((line) => line.startsWith('| `--log-level'));
    const levels = [...((row ?? '').split('|')[2] ?? '').matchAll(/`([a-z]+)`/g)].map((m) => m[1]);
    expect(levels).toEqual([...LOG_LEVELS]);
  });
});

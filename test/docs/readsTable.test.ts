// The table of reads in docs/operations.md is the read declarations (poller/readDeclaration.ts) as
// a page shows them: one row per read any source or discovery makes, with its endpoints, scope,
// cadence, most calls per run, the part it fills, what its failure does and what its estimate
// assumes. A declaration that changes fails this test until the page says the same.
import { describe, expect, it } from 'vitest';
import { ALL_READS } from '../../src/poller/jobs/sources.js';
import type {
  ReadCadence,
  ReadDeclaration,
  ReadFailure,
} from '../../src/poller/readDeclaration.js';
import { pageSection } from './pages.js';

const HEADING = '### Every read, as the code declares it';

function cadenceText(cadence: ReadCadence): string {
  switch (cadence.kind) {
    case 'every poll':
      return 'every poll';
    case 'some polls':
      return `on the polls when ${cadence.when}`;
    case 'shared':
      return (
        `once per \`${cadence.interval}IntervalSeconds\` however many ask` +
        (cadence.refreshedByEvents ? ', and on webhook events' : '')
      );
    case 'on an event':
      return `on ${cadence.event}`;
  }
}

function failureText(failure: ReadFailure): string {
  switch (failure.effect) {
    case 'poll fails':
      return 'the poll fails';
    case 'part down':
      return 'target down; its part stale after `staleAfterSeconds`';
    case 'part late':
      return 'target up; its part stale after `staleAfterSeconds`';
    case 'taken by the read':
      return failure.then;
  }
}

/** A declaration as a row of the page's table, cells trimmed. */
function row(read: ReadDeclaration): string[] {
  return [
    read.name,
    read.api,
    read.endpoints.map((endpoint) => `\`${endpoint}\``).join(', '),
    read.scope,
    cadenceText(read.cadence),
    read.maxCalls,
    read.part,
    failureText(read.failure),
    read.cost.assumes.length === 0 ? '—' : read.cost.assumes.map((a) => `\`${a}\``).join(', '),
  ];
}

/** The rows of the page's table, header and rule left out, cells trimmed. */
function documentedRows(): string[][] {
  return pageSection('docs/operations.md', HEADING)
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| Read |'))
    .map((line) =>
      line
        .slice(2, -2)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

describe('docs/operations.md', () => {
  it('tables every declared read as its declaration says, in declaration order', () => {
    expect(documentedRows()).toEqual(ALL_READS.map(row));
  });
});

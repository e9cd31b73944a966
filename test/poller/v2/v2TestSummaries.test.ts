// The rows of an organization's test list tallied for one repository, from a page that lists every
// test whatever the walk asked for (fixtures/v2/tests-page-ignoring-its-filters.json: five tests,
// each `quarantineState` and `status` written by hand): the quarantine walk asks
// `quarantineState=quarantined`, the unhealthy one `status=flaky,broken`, so a row either filter
// excludes is none of its tests ("`quarantined` or `notQuarantined`"; `TestStatus`: "`healthy`,
// `flaky`, `broken`").
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { QUARANTINE_TALLY, UNHEALTHY_TALLY } from '../../../src/poller/v2/v2TestSummaries.js';
import { v2TestPageSchema, type V2Test } from '../../../src/trunk/v2Schemas.js';

const page = v2TestPageSchema.parse(
  JSON.parse(
    readFileSync(
      new URL('../../trunk/fixtures/v2/tests-page-ignoring-its-filters.json', import.meta.url),
      'utf8',
    ),
  ),
);
const rows = page.data as V2Test[];
const read = { readAt: Date.parse('2026-01-01T00:00:00.000Z') / 1000, metricsPeriod: undefined };

describe('a test list page that ignores the walk’s filter', () => {
  it('counts as quarantined only the rows whose quarantineState is quarantined', () => {
    const tally = QUARANTINE_TALLY.start();
    for (const row of rows) QUARANTINE_TALLY.add(tally, row);
    // Tests 1, 2 and 5 are quarantined (2 is healthy, and quarantined all the same).
    const summary = QUARANTINE_TALLY.summarise(tally, { ...read, unknownStatuses: () => {} });
    expect(summary.count).toBe(3);
    expect(summary.oldestQuarantinedAt).toBe(Date.parse('2025-12-27T20:00:00.000Z') / 1000);
  });

  it('counts as unhealthy only the flaky and broken rows, none of the healthy ones as other', () => {
    const tally = UNHEALTHY_TALLY.start();
    for (const row of rows) UNHEALTHY_TALLY.add(tally, row);
    let unknown = 0;
    const summary = UNHEALTHY_TALLY.summarise(tally, {
      ...read,
      unknownStatuses: (count) => (unknown += count),
    });
    expect(Object.fromEntries(summary.byStatus)).toEqual({ flaky: 2, broken: 1 });
    expect(unknown).toBe(0);
  });
});

// A quarantine list whose paging misbehaves: cyclic or endless tokens, total_rows that moves, an
// empty page that promises more. Work must stay bounded and the log must say what happened.
import { describe, expect, it } from 'vitest';
import type { Fault } from '../../src/simulator/faults.js';
import { sum } from '../support/exposition.js';
import { LEVEL, WEB, logRecords, pollFailures, startFaultRig, until, untilUp } from './harness.js';

const LIST = 'flaky-tests/list-quarantined-tests';

/** What one page of the fake list says, by the page token asked for. */
interface FakePage {
  readonly tests: number;
  readonly totalRows: number;
  readonly next: string;
}

/** A list served from `pages` (by requested token); every row is a distinct test of one owner. */
function pagedList(pages: (token: string) => FakePage): Fault {
  return {
    kind: 'answer',
    answer: (request) => {
      const token = (request as { page_query: { page_token?: string } }).page_query.page_token;
      const page = pages(token ?? '');
      return {
        quarantined_tests: Array.from({ length: page.tests }, (_, index) => ({
          name: `test ${index}`,
          parent: 'suite',
          file: 'suite.test.ts',
          classname: 'Suite',
          codeowners: ['@acme/web'],
          quarantined_at: '2025-12-01T00:00:00Z',
          status_last_updated_at: '2025-12-01T00:00:00Z',
          test_case_id: `${token ?? ''}-${index}`,
          variant: '',
        })),
        page: {
          total_rows: page.totalRows,
          total_pages: Math.ceil(page.totalRows / 100),
          next_page_token: page.next,
          prev_page_token: '',
          last_page_token: '',
          page_index: 0,
        },
      };
    },
  };
}

async function rigWithList(pages: (token: string) => FakePage) {
  const rig = await startFaultRig({
    targets: `  - repo: ${WEB}\n    branches: [main]\n    flakyTests: true`,
  });
  await rig.subject.waitUntilReady();
  const healthy = await rig.subject.samples();
  rig.faults.inject(LIST, pagedList(pages), { repo: WEB, times: Infinity });
  return { rig, healthy };
}

describe('pagination that misbehaves', () => {
  it.each<[string, (token: string) => FakePage, number, string]>([
    [
      'a cyclic next_page_token',
      (token) => ({ tests: 100, totalRows: 1000, next: { '': 'A', A: 'B', B: 'A' }[token] ?? '' }),
      3,
      `quarantine list of ${WEB} repeated a page token after 3 pages`,
    ],
    [
      'a next_page_token that never ends',
      (token) => ({ tests: 100, totalRows: 150, next: `${token}x` }),
      4,
      `quarantine list of ${WEB} has more pages than total_rows (150) promises; stopped after 4 pages`,
    ],
    [
      'an empty page that promises more',
      (token) =>
        token === ''
          ? { tests: 100, totalRows: 300, next: 'B' }
          : { tests: 0, totalRows: 300, next: 'C' },
      2,
      `quarantine list of ${WEB} sent an empty page 2 with a next_page_token`,
    ],
  ])(
    '%s: bounded calls per poll, a clear line, last values kept',
    async (_name, pages, perPoll, line) => {
      // Every page token the list is asked for, in order: a walk starts with ''. A walk under way
      // when the fault came asked for its first page before it, so it starts with another token.
      const tokens: string[] = [];
      const { rig, healthy } = await rigWithList((token) => {
        tokens.push(token);
        return pages(token);
      });

      await until(() => tokens.filter((token) => token === '').length >= 3, 'three walks');
      const starts = tokens.flatMap((token, index) => (token === '' ? [index] : []));
      // Each walk that a later one followed made exactly `perPoll` calls.
      for (const [walk, start] of starts.slice(0, -1).entries()) {
        expect(tokens.slice(start, starts[walk + 1]), `walk ${String(walk + 1)}`).toHaveLength(
          perPoll,
        );
      }
      expect(pollFailures(rig.subject, WEB, 'flaky_tests').at(-1)?.msg).toContain(line);
      const samples = await rig.subject.samples();
      // Each walk stopped counts, as a v2 walk stopped does; two have surely stopped by now.
      const stopped = { endpoint: LIST, kind: 'paging_stopped' };
      expect(sum(samples, 'trunk_exporter_api_anomalies_total', stopped)).toBeGreaterThanOrEqual(2);
      expect(sum(samples, 'trunk_exporter_target_up', { kind: 'flaky_tests' })).toBe(0);
      expect(sum(samples, 'trunk_flaky_tests_quarantined')).toBe(
        sum(healthy, 'trunk_flaky_tests_quarantined'),
      );
    },
  );

  it('total_rows that changes between pages: the walk completes, with one warning per walk', async () => {
    // 150 on the first page, 260 on the second and the third: the list grew once, one warning.
    const { rig } = await rigWithList((token) =>
      token === ''
        ? { tests: 100, totalRows: 150, next: 'B' }
        : token === 'B'
          ? { tests: 100, totalRows: 260, next: 'C' }
          : { tests: 60, totalRows: 260, next: '' },
    );

    const samples = await rig.subject.waitFor(
      (current) => sum(current, 'trunk_flaky_tests_quarantined') === 150,
      'the walk of the changing list',
    );
    await untilUp(rig.subject, { kind: 'flaky_tests' });
    expect(
      sum(samples, 'trunk_flaky_tests_quarantined_by_codeowner', { codeowner: '@acme/web' }),
    ).toBe(260);
    const warnings = logRecords(rig.subject).filter((record) =>
      record.msg.includes('changed during the walk'),
    );
    expect(warnings[0]?.level).toBe(LEVEL.warn);
    expect(warnings[0]?.msg).toBe(
      `quarantine list of ${WEB} changed during the walk: total_rows went from 150 to 260 on page 2; reporting the first page's count`,
    );
    expect(warnings.filter((record) => record.msg.includes('on page 3'))).toEqual([]);
    expect(pollFailures(rig.subject, WEB, 'flaky_tests')).toEqual([]);
  });
});

// `GET /v2/tests` (and its old path `/v2/test-cases`): every test of every collection, quarantined
// or not, with the definition's filters, search, metric sorts and `include=metrics`. Sorted by
// name within each collection, collections in the world's order (the definition sorts by name
// across them: close enough for paging, and a walk reads one collection at a time).
import type { QuarantineListModel } from './quarantineModel.js';
import type { SimulatedRepository } from './repositories.js';
import type { TestCollectionModel } from './testCollectionModel.js';
import { validationFailed, type V2Answer } from './v2Errors.js';
import {
  compareSortKeys,
  takePage,
  type ListPage,
  type PageRequest,
  type Query,
  type SortDirection,
  type SortKey,
} from './v2Paging.js';
import { readBoolean, readEnum, readList, readText } from './v2Query.js';
import {
  isMarkedFlaky,
  labelsOf,
  METRIC_PERIODS,
  metricSortValue,
  metricsOf,
  renderTestV2,
  statusV2,
  TEST_STATUSES,
  type MetricPeriod,
  type TestV2Body,
  type ViewTest,
} from './v2TestResponses.js';

/** Query parameters of the test list (besides paging), as the definition names them. */
export const TEST_LIST_FILTERS = [
  'testCollectionId',
  'status',
  'q',
  'file',
  'owner',
  'variant',
  'include',
  'label',
  'quarantineState',
  'markedFlaky',
  'newlyFlaky',
  'period',
  'sort',
  'direction',
] as const;

const SORTS = [
  'name',
  'failureRate',
  'durationP95',
  'prsImpacted',
  'lastRunAt',
  'lastFailureAt',
] as const;
type MetricSort = Exclude<(typeof SORTS)[number], 'name'>;

/** One repository's collection as the test list reads it. */
export interface CollectionEntry {
  readonly repository: SimulatedRepository;
  readonly index: number;
  readonly id: string;
  readonly repositoryId: string;
  readonly quarantine: QuarantineListModel;
  readonly unquarantined: TestCollectionModel;
}

/** The collection's tests, quarantined and not, sorted by name then id (kept per version). */
export function collectionTests(entry: CollectionEntry): readonly ViewTest[] {
  const versions = `${entry.quarantine.version}:${entry.unquarantined.version}`;
  const cached = sortedTests.get(entry);
  if (cached?.versions === versions) return cached.tests;
  const tests: ViewTest[] = [
    ...entry.quarantine.tests.map((test) => ({
      ...test,
      statusSince: test.classified ? test.statusLastUpdatedAt : undefined,
      quarantinedSince: test.quarantinedAt,
    })),
    ...entry.unquarantined.tests.map((test) => ({ ...test, quarantinedSince: undefined })),
  ];
  tests.sort((a, b) => compareText(a.name, b.name) || compareText(a.testCaseId, b.testCaseId));
  sortedTests.set(entry, { versions, tests });
  return tests;
}
const sortedTests = new WeakMap<
  CollectionEntry,
  { readonly versions: string; readonly tests: readonly ViewTest[] }
>();

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What a request asks of the list, read and checked. */
interface TestQuery {
  readonly keep: (test: ViewTest) => boolean;
  readonly collectionId: string | undefined;
  readonly sort: (typeof SORTS)[number];
  readonly direction: SortDirection;
  readonly period: MetricPeriod | undefined;
  readonly withMetrics: boolean;
}

/** Reads the test list's query: a 400 for any value the definition does not allow. */
function readTestQuery(query: Query, now: number): V2Answer<TestQuery> {
  const statuses = readList(query, 'status', TEST_STATUSES, 'test status');
  if (!statuses.ok) return statuses;
  const quarantineState = readEnum(query, 'quarantineState', ['quarantined', 'notQuarantined']);
  if (!quarantineState.ok) return quarantineState;
  const include = readEnum(query, 'include', ['metrics']);
  if (!include.ok) return include;
  const period = readEnum(query, 'period', Object.keys(METRIC_PERIODS) as MetricPeriod[]);
  if (!period.ok) return period;
  const sort = readEnum(query, 'sort', SORTS);
  if (!sort.ok) return sort;
  const direction = readEnum(query, 'direction', ['asc', 'desc'] as const);
  if (!direction.ok) return direction;
  const markedFlaky = readBoolean(query, 'markedFlaky');
  if (!markedFlaky.ok) return markedFlaky;
  const newlyFlaky = readBoolean(query, 'newlyFlaky');
  if (!newlyFlaky.ok) return newlyFlaky;
  const texts = new Map<string, string | undefined>();
  for (const name of ['testCollectionId', 'q', 'file', 'owner', 'variant', 'label']) {
    const text = readText(query, name);
    if (!text.ok) return text;
    texts.set(name, text.body);
  }
  const sortName = sort.body ?? 'name';
  const needsPeriod = [
    include.body === 'metrics' ? 'include=metrics' : undefined,
    sortName === 'name' ? undefined : `sort=${sortName}`,
    newlyFlaky.body === undefined ? undefined : 'newlyFlaky',
  ].find((asked) => asked !== undefined);
  if (needsPeriod !== undefined && period.body === undefined) {
    return validationFailed(
      `${needsPeriod} requires period (${Object.keys(METRIC_PERIODS).join(', ')})`,
    );
  }
  const search = searchOf(texts.get('q'));
  const file = texts.get('file');
  const owner = texts.get('owner');
  const variant = texts.get('variant');
  const label = texts.get('label');
  const periodStart = now - METRIC_PERIODS[period.body ?? '1d'] * 86_400;
  const keep = (test: ViewTest): boolean =>
    (statuses.body === undefined || statuses.body.has(statusV2(test.status))) &&
    (quarantineState.body === undefined ||
      (quarantineState.body === 'quarantined') === (test.quarantinedSince !== undefined)) &&
    (owner === undefined || test.codeowners.includes(owner)) &&
    (variant === undefined || test.variant === variant) &&
    (file === undefined || (test.file ?? '').includes(file)) &&
    (label === undefined || labelsOf(test, now).some((each) => each.name === label)) &&
    (markedFlaky.body === undefined || isMarkedFlaky(test) === markedFlaky.body) &&
    (newlyFlaky.body === undefined ||
      (test.status === 'FLAKY' && (test.statusSince ?? -Infinity) >= periodStart) ===
        newlyFlaky.body) &&
    search(test);
  return {
    ok: true,
    body: {
      keep,
      collectionId: texts.get('testCollectionId'),
      sort: sortName,
      direction: direction.body ?? (sortName === 'name' ? 'asc' : 'desc'),
      period: period.body,
      withMetrics: include.body === 'metrics',
    },
  };
}

/**
 * The free-text search `q`: every word must match, a bare word anywhere in the name, parent,
 * class or file, a `file:`, `class:`, `parent:` or `name:` word in that field only (any case).
 */
function searchOf(q: string | undefined): (test: ViewTest) => boolean {
  if (q === undefined) return () => true;
  const words = q
    .toLowerCase()
    .split(/\s+/)
    .filter((word) => word !== '');
  return (test) =>
    words.every((word) => {
      const [qualifier, value] = /^(file|class|parent|name):(.*)$/.exec(word)?.slice(1) ?? [];
      const fields: Record<string, string> = {
        name: test.name,
        parent: test.parent ?? '',
        class: test.classname ?? '',
        file: test.file ?? '',
      };
      if (qualifier !== undefined)
        return (fields[qualifier] ?? '').toLowerCase().includes(value ?? '');
      return Object.values(fields).some((field) => field.toLowerCase().includes(word));
    });
}

/** A page of the organization's tests. `labelAnchor` dates the labels (unix seconds). */
export function listTests(
  collections: readonly CollectionEntry[],
  query: Query,
  page: PageRequest,
  now: number,
  labelAnchor: number,
): V2Answer<ListPage<TestV2Body>> {
  const read = readTestQuery(query, now);
  if (!read.ok) return read;
  const asked = read.body;
  const chosen = collections.filter(
    (entry) => asked.collectionId === undefined || entry.id === asked.collectionId,
  );
  const render = ([entry, test]: readonly [CollectionEntry, ViewTest]) =>
    renderTestV2(
      test,
      { testCollectionId: entry.id, repoId: entry.repositoryId },
      {
        labelAnchor,
        ...(asked.withMetrics ? { metrics: metricsOf(test, asked.period ?? '1d', now) } : {}),
      },
    );
  if (asked.sort !== 'name') {
    return metricSorted(chosen, asked, asked.sort, page, now, render);
  }
  const descending = asked.direction === 'desc';
  // Collections before the cursor's are skipped unread: a walk costs one collection per page.
  const resume = page.includeTotal ? undefined : page.after?.[0];
  function* rows(): Generator<readonly [CollectionEntry, ViewTest]> {
    const ordered = descending ? [...chosen].reverse() : chosen;
    for (const entry of ordered) {
      if (
        typeof resume === 'number' &&
        (descending ? entry.index > resume : entry.index < resume)
      ) {
        continue;
      }
      const tests = collectionTests(entry);
      const walk = descending ? [...tests].reverse() : tests;
      for (const test of walk) if (asked.keep(test)) yield [entry, test];
    }
  }
  const keyOf = ([entry, test]: readonly [CollectionEntry, ViewTest]): SortKey => [
    entry.index,
    test.name,
    test.testCaseId,
  ];
  return { ok: true, body: takePage(rows(), keyOf, page, render, { direction: asked.direction }) };
}

/** A metric sort: across every collection, tests with no value for it left out. */
function metricSorted(
  collections: readonly CollectionEntry[],
  asked: TestQuery,
  sort: MetricSort,
  page: PageRequest,
  now: number,
  render: (row: readonly [CollectionEntry, ViewTest]) => TestV2Body,
): V2Answer<ListPage<TestV2Body>> {
  const period = asked.period ?? '1d';
  const rows: { row: readonly [CollectionEntry, ViewTest]; key: SortKey }[] = [];
  for (const entry of collections) {
    for (const test of collectionTests(entry)) {
      if (!asked.keep(test)) continue;
      const value = metricSortValue(test, sort, period, now);
      if (value !== undefined) rows.push({ row: [entry, test], key: [value, test.testCaseId] });
    }
  }
  const sign = asked.direction === 'desc' ? -1 : 1;
  rows.sort((a, b) => sign * compareSortKeys(a.key, b.key));
  return {
    ok: true,
    body: takePage(
      rows,
      (row) => row.key,
      page,
      (row) => render(row.row),
      { direction: asked.direction },
    ),
  };
}

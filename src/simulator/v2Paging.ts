// Cursor paging of every v2 list (trunk-api-v2.md "Paging"): `limit` 1-100 (default 25), opaque
// forward-only cursors tied to the endpoint and filters that made them, `includeTotal`. A cursor
// names the sort key of the last row sent, not an offset, so rows that arrive or leave between two
// pages never make a walk skip or repeat a row that stayed.
import { deriveSeed } from './random.js';
import { invalidCursor, validationFailed, type V2Answer } from './v2Errors.js';

export const V2_DEFAULT_LIMIT = 25;
export const V2_MAX_LIMIT = 100;

/** A row's place in its list: compared element by element, numbers before strings. */
export type SortKey = readonly (number | string)[];

/** The query parameters of a request, each repeated one joined with commas. */
export type Query = ReadonlyMap<string, string>;

/** What a list request asks of paging. */
export interface PageRequest {
  readonly limit: number;
  /** The key of the last row of the previous page; undefined for the first page. */
  readonly after: SortKey | undefined;
  readonly includeTotal: boolean;
  /** Which endpoint and filters the cursors belong to. */
  readonly scope: string;
  /**
   * Values the first page fixed for the whole walk (testing results' default `until`), carried
   * by the cursor; empty on a first page.
   */
  readonly pinned: Readonly<Record<string, string>>;
}

/** How a list is walked: its rows in key order, or in reverse (`desc`). */
export type SortDirection = 'asc' | 'desc';

/** One page as the wire carries it. */
export interface ListPage<T> {
  readonly data: T[];
  readonly nextCursor: string | null;
  readonly hasMore: boolean;
  readonly total?: number;
}

const PAGING_PARAMETERS = ['limit', 'cursor', 'includeTotal'];
const CURSOR_PREFIX = 'v2c_';

/**
 * The query of `searchParams`, or a 400 naming the first parameter the endpoint does not take
 * (paging parameters are always allowed).
 */
export function readQuery(
  searchParams: URLSearchParams,
  filters: readonly string[],
): V2Answer<Query> {
  const query = new Map<string, string>();
  for (const name of new Set(searchParams.keys())) {
    if (!filters.includes(name) && !PAGING_PARAMETERS.includes(name)) {
      const known = [...filters, ...PAGING_PARAMETERS].join(', ');
      return validationFailed(`unknown query parameter ${name}; this endpoint takes ${known}`);
    }
    query.set(name, searchParams.getAll(name).join(','));
  }
  return { ok: true, body: query };
}

/** The paging part of a list request to `endpoint`, whose cursors are tied to its filters. */
export function readPageRequest(endpoint: string, query: Query): V2Answer<PageRequest> {
  const limitText = query.get('limit');
  const limit = limitText === undefined ? V2_DEFAULT_LIMIT : Number(limitText);
  if (!/^\d+$/.test(limitText ?? '1') || limit < 1 || limit > V2_MAX_LIMIT) {
    return validationFailed(
      `limit must be a whole number from 1 to ${V2_MAX_LIMIT}, got ${JSON.stringify(limitText)}`,
    );
  }
  const includeTotalText = query.get('includeTotal') ?? 'false';
  if (includeTotalText !== 'true' && includeTotalText !== 'false') {
    return validationFailed(
      `includeTotal must be true or false, got ${JSON.stringify(includeTotalText)}`,
    );
  }
  const filters = [...query]
    .filter(([name]) => !PAGING_PARAMETERS.includes(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`);
  const scope = deriveSeed(0, `${endpoint}?${filters.join('&')}`).toString(36);
  const cursor = query.get('cursor');
  let decoded: Pick<PageRequest, 'after' | 'pinned'> = { after: undefined, pinned: {} };
  if (cursor !== undefined) {
    const read = decodeCursor(cursor, scope);
    if (read === undefined) {
      return invalidCursor('cursor is not a cursor of this endpoint with these filters');
    }
    decoded = read;
  }
  return {
    ok: true,
    body: { limit, includeTotal: includeTotalText === 'true', scope, ...decoded },
  };
}

/** Orders two sort keys (negative: `a` comes first). */
export function compareSortKeys(a: SortKey, b: SortKey): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (typeof x !== typeof y) return typeof x === 'number' ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/**
 * The page of `rows` (in sort-key order, or its reverse for `desc`) after the request's cursor.
 * `total`, when asked, is the number of rows of the whole list; `rows` may be lazy, and is read
 * only as far as the page needs unless the total is asked. `pin` goes into the next cursor.
 */
export function takePage<T, R>(
  rows: Iterable<T>,
  keyOf: (row: T) => SortKey,
  request: PageRequest,
  render: (row: T) => R,
  options: { readonly direction?: SortDirection; readonly pin?: Record<string, string> } = {},
): ListPage<R> {
  const sign = options.direction === 'desc' ? -1 : 1;
  const page: T[] = [];
  let hasMore = false;
  let total = 0;
  for (const row of rows) {
    total += 1;
    if (hasMore) continue;
    if (request.after !== undefined && sign * compareSortKeys(keyOf(row), request.after) <= 0) {
      continue;
    }
    if (page.length === request.limit) {
      hasMore = true;
      if (!request.includeTotal) break;
      continue;
    }
    page.push(row);
  }
  const last = page.at(-1);
  const pinned = options.pin ?? request.pinned;
  return {
    data: page.map(render),
    nextCursor:
      hasMore && last !== undefined ? encodeCursor(request.scope, keyOf(last), pinned) : null,
    hasMore,
    ...(request.includeTotal ? { total } : {}),
  };
}

function encodeCursor(
  scope: string,
  key: SortKey,
  pinned: Readonly<Record<string, string>>,
): string {
  const payload =
    Object.keys(pinned).length > 0 ? { s: scope, k: key, p: pinned } : { s: scope, k: key };
  return CURSOR_PREFIX + Buffer.from(JSON.stringify(payload)).toString('base64url');
}

function decodeCursor(
  cursor: string,
  scope: string,
): Pick<PageRequest, 'after' | 'pinned'> | undefined {
  if (!cursor.startsWith(CURSOR_PREFIX)) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString());
  } catch {
    return undefined;
  }
  if (typeof payload !== 'object' || payload === null) return undefined;
  const { s, k, p = {} } = payload as Partial<Record<'s' | 'k' | 'p', unknown>>;
  if (s !== scope || !Array.isArray(k) || typeof p !== 'object' || p === null) return undefined;
  const key: unknown[] = k;
  if (!key.every((part) => typeof part === 'number' || typeof part === 'string')) return undefined;
  const pinned: Record<string, string> = {};
  for (const [name, value] of Object.entries(p)) {
    if (typeof value !== 'string') return undefined;
    pinned[name] = value;
  }
  return { after: key, pinned };
}

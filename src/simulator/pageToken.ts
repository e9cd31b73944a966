// Opaque page tokens for the quarantine list. They are deliberately not plain numbers, so a client
// that builds tokens itself (which trunk-api-notes.md forbids) fails against the simulator too.
import { deriveSeed } from './random.js';

/** Where a page starts, in which version of which list. */
export interface PageCursor {
  /** Index of the page's first row. */
  readonly offset: number;
  /** Version of the list the walk started on, so later pages come from the same list. */
  readonly listVersion: number;
  /** Which list (repository) the token belongs to. */
  readonly listKey: string;
}

const PREFIX = 'qpt1_';

interface TokenPayload {
  readonly o: number;
  readonly v: number;
  readonly l: string;
}

/** A short stable fingerprint of a repository key, so tokens do not spell out the repository. */
export function pageListKey(repositoryKey: string): string {
  return deriveSeed(0, repositoryKey).toString(36);
}

/** Encodes a cursor as an opaque token. */
export function encodePageToken(cursor: PageCursor): string {
  const payload: TokenPayload = { o: cursor.offset, v: cursor.listVersion, l: cursor.listKey };
  return PREFIX + Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
}

/** Decodes a token made by encodePageToken; undefined for anything else. */
export function decodePageToken(token: string): PageCursor | undefined {
  if (!token.startsWith(PREFIX)) return undefined;
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(token.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof payload !== 'object' || payload === null) return undefined;
  const { o, v, l } = payload as Partial<Record<keyof TokenPayload, unknown>>;
  if (!isNonNegativeInteger(o) || !isNonNegativeInteger(v) || typeof l !== 'string') {
    return undefined;
  }
  return { offset: o, listVersion: v, listKey: l };
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

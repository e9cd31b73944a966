// One page of v1's list-quarantined-tests: offset pages of one version of the list, behind opaque
// tokens, so a walk sees one consistent list while it changes (trunk-api-v1.md 2.4 and 4.1).
import { decodePageToken, encodePageToken, pageListKey } from './pageToken.js';
import type { QuarantineListModel } from './quarantineModel.js';
import {
  renderQuarantinedTest,
  type QuarantinedTestsPageBody,
  type SimulatorFlavour,
} from './responses.js';

/** The page, or a 400 with its plain-text message. */
export type QuarantinePageAnswer =
  | { readonly ok: true; readonly body: QuarantinedTestsPageBody }
  | { readonly ok: false; readonly status: 400; readonly message: string };

const badRequest = (message: string) => ({ ok: false, status: 400, message }) as const;

/** The page of `model` (the list of repository `repositoryKey`) that the request asks for. */
export function quarantinedTestsPage(
  repositoryKey: string,
  model: QuarantineListModel,
  request: { readonly pageSize: number; readonly pageToken: string },
  flavour: SimulatorFlavour,
): QuarantinePageAnswer {
  const { pageSize, pageToken } = request;
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    return badRequest('page_query.page_size must be a positive integer');
  }
  const listKey = pageListKey(repositoryKey);
  let list = model.tests;
  let listVersion = model.version;
  let offset = 0;
  if (pageToken !== '') {
    const cursor = decodePageToken(pageToken);
    if (cursor === undefined || cursor.listKey !== listKey || cursor.listVersion > listVersion) {
      return badRequest('page_query.page_token is not a valid page token for this repository');
    }
    // A walk stays on the list version it started on; once that version is no longer kept,
    // it continues on the current list, as a live API would.
    const kept = model.atVersion(cursor.listVersion);
    if (kept !== undefined) {
      list = kept;
      listVersion = cursor.listVersion;
    }
    offset = cursor.offset;
  }
  const total = list.length;
  const totalPages = Math.ceil(total / pageSize);
  const token = (at: number): string => encodePageToken({ offset: at, listVersion, listKey });
  return {
    ok: true,
    body: {
      quarantined_tests: list
        .slice(offset, offset + pageSize)
        .map((test) => renderQuarantinedTest(test, flavour)),
      page: {
        total_rows: total,
        total_pages: totalPages,
        next_page_token: offset + pageSize < total ? token(offset + pageSize) : '',
        prev_page_token: offset > 0 ? token(Math.max(0, offset - pageSize)) : '',
        last_page_token: totalPages > 0 ? token((totalPages - 1) * pageSize) : '',
        page_index: Math.floor(offset / pageSize),
      },
    },
  };
}

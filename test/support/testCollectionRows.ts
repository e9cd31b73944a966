// Test collections (`GET /v2/test-collections`) as the fakes serve them and the page shows them.
import { select, type Sample } from './exposition.js';

/** A `TestCollection` row, shaped as the definition requires it. */
export function collectionRow(
  id: string,
  name: string,
  testCaseCount: number,
  quarantineEnabled: boolean,
): Record<string, unknown> {
  return {
    id,
    name,
    description: null,
    testCaseCount,
    quarantineEnabled,
    autoQuarantineEnabled: false,
    createdAt: '2025-06-01T00:00:00.000Z',
    updatedAt: '2025-12-01T00:00:00.000Z',
  };
}

/** A collection family as `collection: value`. */
export const byCollection = (samples: readonly Sample[], name: string): Record<string, number> =>
  Object.fromEntries(
    select(samples, name).map((sample): [string, number] => [
      sample.labels.collection ?? '',
      sample.value,
    ]),
  );

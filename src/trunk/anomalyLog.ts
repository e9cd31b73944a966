// The log's share of odd data in Trunk's answers (responseAnomalies.ts): each is counted in
// trunk_exporter_api_anomalies_total, and a warn line names the endpoint, the target and what was
// odd, so an operator can find the rows. Once an hour per endpoint and kind at most: one bad row in
// every poll of a thousand queues would otherwise be a thousand lines a cycle.
import { LineThrottle } from '../log/lineThrottle.js';
import type { Logger } from '../log/logger.js';
import type { ApiAnomalyKind } from './observer.js';
import type { CallTarget } from './transport.js';

/** How long after a line one endpoint's anomalies of one kind are not logged again. */
export const ANOMALY_LOG_INTERVAL_MS = 3_600_000;

/** What each kind of anomaly found in one response is, and what the exporter did with it. */
const WHAT: Record<ApiAnomalyKind, string> = {
  duplicate_pr: 'a pull request listed twice; the entry with the latest stateChangedAt is kept',
  timestamp_out_of_range: 'a timestamp outside 2000-2100; not exported',
  invalid_field: 'a field that cannot be used as it is; read as absent, or cut to 200 characters',
  invalid_item: 'a row without what the exporter needs of it; left out, the rest is read',
  unknown_entry_state:
    'a pull request gone from the live entries that no read of concluded entries lists, as in a state the exporter does not ask for; no exit counted',
  unnamed_repository: 'tests of a repository the exporter cannot name',
  unknown_value: 'a value outside the documented ones; counted apart',
  future_timestamp: "a time over a minute ahead of the exporter's clock",
  paging_stopped: 'pages that cannot be followed to the end of the list; the read failed',
};

/** Logs the anomalies of responses, at most once per ANOMALY_LOG_INTERVAL_MS per endpoint and kind. */
export class AnomalyLog {
  readonly #logger: Logger;
  /** By endpoint and kind, the anomalies not logged since the last line. */
  readonly #lines: LineThrottle<string, { count: number }>;

  constructor(logger: Logger, now: () => number = Date.now) {
    this.#logger = logger;
    this.#lines = new LineThrottle(ANOMALY_LOG_INTERVAL_MS, () => ({ count: 0 }), now);
  }

  /** `count` anomalies of `kind` in one answer of `target`'s endpoint, at `fields` where named. */
  found(target: CallTarget, kind: ApiAnomalyKind, count: number, fields?: readonly string[]): void {
    const admitted = this.#lines.admit(`${target.endpoint} ${kind}`, (held) => {
      held.count += count;
    });
    if (admitted === undefined) return;
    const unlogged = admitted.held?.count ?? 0;
    this.#logger.warn(
      {
        endpoint: target.endpoint,
        repo: target.repo,
        branch: target.branch,
        kind,
        count,
        fields: fields?.slice(0, MAX_FIELDS_NAMED),
      },
      `odd data in Trunk's answer of ${target.endpoint} for ${target.repo}${target.branch === undefined ? '' : ` ${target.branch}`}: ${String(count)} × ${kind} (${WHAT[kind]})${fields === undefined ? '' : `, at ${fieldList(fields)}`}; counted in trunk_exporter_api_anomalies_total${unlogged > 0 ? `, with ${String(unlogged)} more of this endpoint and kind not logged in the last hour` : ''}; logged at most once an hour per endpoint and kind`,
    );
  }
}

/** Fields a line names at most: a page of 100 queues may have ten settings each read as absent. */
const MAX_FIELDS_NAMED = 10;

/** The first MAX_FIELDS_NAMED of `fields`, and how many more there are. */
function fieldList(fields: readonly string[]): string {
  const more = fields.length - MAX_FIELDS_NAMED;
  const named = fields.slice(0, MAX_FIELDS_NAMED).join(', ');
  return more > 0 ? `${named} and ${String(more)} more` : named;
}

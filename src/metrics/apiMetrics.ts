import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { ApiCallObserver } from '../trunk/observer.js';
import { ENDPOINTS } from '../trunk/schemas.js';
import { V2_ENDPOINTS } from '../trunk/v2Schemas.js';
import { NAMESPACE, fqName } from './naming.js';

const SUBSYSTEM = 'exporter';

const API_REQUESTS = fqName(NAMESPACE, SUBSYSTEM, 'api_requests', 'total');
const API_REQUEST_DURATION = fqName(NAMESPACE, SUBSYSTEM, 'api_request_duration', 'seconds');
const API_SCHEMA_MISMATCHES = fqName(NAMESPACE, SUBSYSTEM, 'api_schema_mismatches', 'total');
export const API_ANOMALIES = fqName(NAMESPACE, SUBSYSTEM, 'api_anomalies', 'total');

/** From a fast API answer to the client's longest sensible timeout. */
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30];

/** Registers the Trunk API call metrics and returns the observer the API client reports to. */
export function registerApiMetrics(registry: Registry): ApiCallObserver {
  const requests = new Counter({
    name: API_REQUESTS,
    help:
      'Requests sent to the Trunk API, by endpoint and HTTP status code (or timeout / ' +
      'network_error / response_too_large: a 2xx body over trunk.maxResponseBytes, not read / ' +
      'aborted: sent, then given up by the exporter before its answer, as when a poll stops at ' +
      'a failed lookup, a reload or shutdown).',
    labelNames: ['endpoint', 'code'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: API_REQUEST_DURATION,
    help: 'Duration of requests to the Trunk API, in seconds.',
    labelNames: ['endpoint'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const schemaMismatches = new Counter({
    name: API_SCHEMA_MISMATCHES,
    help: 'Successful Trunk API responses whose body did not match the expected schema.',
    labelNames: ['endpoint'] as const,
    registers: [registry],
  });
  // Present from the first scrape, so rate() and increase() see the first mismatch as a change,
  // whichever API version the exporter reads.
  for (const endpoint of [...Object.values(ENDPOINTS), ...Object.values(V2_ENDPOINTS)]) {
    schemaMismatches.inc({ endpoint }, 0);
  }
  const anomalies = new Counter({
    name: API_ANOMALIES,
    help:
      'Odd data in Trunk API responses that matched the schema, by endpoint and kind: duplicate_pr ' +
      '(a PR number listed twice in one queue; the entry with the latest stateChangedAt is kept), ' +
      'timestamp_out_of_range (a timestamp outside 2000-2100; not exported), invalid_field (a ' +
      'timestamp that is not an ISO 8601 date-time with a zone, not exported; a code owner, ' +
      'through API v1 a state, mode, merge method or priority name, and through API v2 a reason ' +
      'or a check or collection name, over 200 characters, cut to 199 and an ellipsis; through ' +
      'API v2 a count of a test metric that is missing or no count, which adds nothing, and a ' +
      'verification run updated before it was created, its duration counted as 0, and a tested ' +
      'PR of a run without a usable number, left out of the run, which is still counted; a merge ' +
      "queue's numeric setting that is a fraction or below its documented floor, or a setting a " +
      'queue family shows of another type than Trunk defines, not exported), ' +
      'invalid_item (a list ' +
      'item that cannot be used, such as a PR without a prNumber, or a queue-entry transition listed ' +
      'again; left out, the rest of the list is used), unknown_entry_state (API v2: a PR gone from the live queue entries that no read of ' +
      'concluded entries lists, so in a state Trunk added; not counted as an exit), ' +
      'unnamed_repository (API v2: tests whose repoId names no repository the exporter can name; ' +
      'counted for no repository), unknown_value (an outcome of a testing result, or a status of an ' +
      'unhealthy test, the exporter does not know; counted as other; a status of a verification run, ' +
      'counted as unknown; a check conclusion, counted as no failure), future_timestamp (API v2: a testing result that ended, a verification run ' +
      "created or updated, or a queue entry that concluded, over a minute after the exporter's " +
      'clock: skew or a bad row; counted once, and the next read does not start after it), ' +
      'paging_stopped (a walk of a list stopped before its last page, its paging not to be ' +
      'trusted or past its bound: API v1 a page token repeated, an empty page with a token, more ' +
      'pages than total_rows promises or than 5000; API v2 a cursor repeated, over 8192 characters ' +
      'or missing beside hasMore, too many pages or empty pages in a row, or a page after the first ' +
      'answered 400 INVALID_CURSOR; the read fails); under ' +
      'endpoint="webhook", odd fields of signed webhook ' +
      'events, also missing_field (a field a count needs is absent).',
    labelNames: ['endpoint', 'kind'] as const,
    registers: [registry],
  });
  // Each kind an endpoint's answers can show, as for schema mismatches.
  anomalies.inc({ endpoint: ENDPOINTS.getQueue, kind: 'duplicate_pr' }, 0);
  const lists = [
    ENDPOINTS.getQueue,
    ENDPOINTS.listQuarantinedTests,
    V2_ENDPOINTS.listMergeQueues,
    V2_ENDPOINTS.listQueuePullRequests,
    V2_ENDPOINTS.listTests,
    V2_ENDPOINTS.listTestCases,
    V2_ENDPOINTS.listTestingResults,
    V2_ENDPOINTS.listVerificationRuns,
    V2_ENDPOINTS.listQueueEntryHistory,
    V2_ENDPOINTS.listTestCollections,
  ];
  for (const endpoint of lists) anomalies.inc({ endpoint, kind: 'invalid_item' }, 0);
  const withTimestamps = [
    ...Object.values(ENDPOINTS),
    V2_ENDPOINTS.listQueuePullRequests,
    V2_ENDPOINTS.listTests,
    V2_ENDPOINTS.listTestCases,
    V2_ENDPOINTS.listTestingResults,
    V2_ENDPOINTS.listVerificationRuns,
    V2_ENDPOINTS.listQueueEntryHistory,
  ];
  for (const endpoint of withTimestamps) {
    anomalies.inc({ endpoint, kind: 'timestamp_out_of_range' }, 0);
    anomalies.inc({ endpoint, kind: 'invalid_field' }, 0);
  }
  anomalies.inc({ endpoint: V2_ENDPOINTS.listQueuePullRequests, kind: 'unknown_entry_state' }, 0);
  anomalies.inc({ endpoint: V2_ENDPOINTS.listQueuePullRequests, kind: 'future_timestamp' }, 0);
  anomalies.inc({ endpoint: V2_ENDPOINTS.listTests, kind: 'unnamed_repository' }, 0);
  anomalies.inc({ endpoint: V2_ENDPOINTS.listTestingResults, kind: 'unknown_value' }, 0);
  anomalies.inc({ endpoint: V2_ENDPOINTS.listTestingResults, kind: 'future_timestamp' }, 0);
  anomalies.inc({ endpoint: V2_ENDPOINTS.listVerificationRuns, kind: 'unknown_value' }, 0);
  anomalies.inc({ endpoint: V2_ENDPOINTS.listVerificationRuns, kind: 'future_timestamp' }, 0);
  anomalies.inc({ endpoint: V2_ENDPOINTS.listTests, kind: 'unknown_value' }, 0);
  anomalies.inc({ endpoint: V2_ENDPOINTS.listTestCollections, kind: 'invalid_field' }, 0);
  // A queue's label value cut, or a setting read as absent (trunk/queueSettings.ts).
  anomalies.inc({ endpoint: V2_ENDPOINTS.listMergeQueues, kind: 'invalid_field' }, 0);
  // Every list walked page by page (the test collections as far as their newest 100).
  const walked = lists.filter((endpoint) => endpoint !== ENDPOINTS.getQueue);
  for (const endpoint of walked) anomalies.inc({ endpoint, kind: 'paging_stopped' }, 0);

  return {
    requestFinished(endpoint, code, durationSeconds) {
      requests.inc({ endpoint, code });
      // A NaN would poison the histogram's sum for the life of the process; skip it rather.
      if (Number.isFinite(durationSeconds) && durationSeconds >= 0) {
        duration.observe({ endpoint }, durationSeconds);
      }
    },
    schemaMismatch(endpoint) {
      schemaMismatches.inc({ endpoint });
    },
    anomaly(endpoint, kind, count) {
      anomalies.inc({ endpoint, kind }, count);
    },
  };
}

import { describe, expect, it } from 'vitest';
import { registerApiMetrics } from '../../src/metrics/apiMetrics.js';
import { createRegistry } from '../../src/metrics/registry.js';
import { V2_ENDPOINTS } from '../../src/trunk/v2Schemas.js';
import { renderRegistry } from './page.js';

describe('API call observer', () => {
  it('starts every endpoint, v1 and v2, at 0 schema mismatches, so rate() sees the first one', async () => {
    const registry = createRegistry({ defaultMetrics: false });
    registerApiMetrics(registry);
    const page = await renderRegistry(registry, 'prometheus');
    for (const endpoint of Object.values(V2_ENDPOINTS)) {
      expect(page).toContain(
        `trunk_exporter_api_schema_mismatches_total{endpoint="${endpoint}"} 0\n`,
      );
    }
    expect(page).toContain('trunk_exporter_api_schema_mismatches_total{endpoint="getQueue"} 0\n');
    expect(page).toContain(
      'trunk_exporter_api_schema_mismatches_total{endpoint="getSubmittedPullRequest"} 0\n',
    );
    expect(page).toContain(
      'trunk_exporter_api_schema_mismatches_total{endpoint="flaky-tests/list-quarantined-tests"} 0\n',
    );
    expect(page).not.toContain('trunk_exporter_api_requests_total');
  });

  it('counts requests and mismatches and times requests', async () => {
    const registry = createRegistry({ defaultMetrics: false });
    const observer = registerApiMetrics(registry);
    observer.requestFinished('getQueue', '200', 0.2);
    observer.requestFinished('getQueue', '200', 0.3);
    observer.requestFinished('getQueue', 'network_error', 0.01);
    observer.schemaMismatch('getQueue');
    const page = await renderRegistry(registry, 'prometheus');
    expect(page).toContain('trunk_exporter_api_requests_total{endpoint="getQueue",code="200"} 2\n');
    expect(page).toContain(
      'trunk_exporter_api_requests_total{endpoint="getQueue",code="network_error"} 1\n',
    );
    expect(page).toContain('trunk_exporter_api_schema_mismatches_total{endpoint="getQueue"} 1\n');
    expect(page).toContain(
      'trunk_exporter_api_request_duration_seconds_count{endpoint="getQueue"} 3\n',
    );
    expect(page).toContain(
      'trunk_exporter_api_request_duration_seconds_bucket{endpoint="getQueue",le="30"} 3\n',
    );
  });

  it('counts a request with an unusable duration but keeps it out of the histogram', async () => {
    const registry = createRegistry({ defaultMetrics: false });
    const observer = registerApiMetrics(registry);
    observer.requestFinished('getQueue', '200', 0.2);
    observer.requestFinished('getQueue', '200', Number.NaN);
    observer.requestFinished('getQueue', '200', -1);
    const page = await renderRegistry(registry, 'prometheus');
    expect(page).toContain('trunk_exporter_api_requests_total{endpoint="getQueue",code="200"} 3\n');
    expect(page).toContain(
      'trunk_exporter_api_request_duration_seconds_sum{endpoint="getQueue"} 0.2\n',
    );
    expect(page).toContain(
      'trunk_exporter_api_request_duration_seconds_count{endpoint="getQueue"} 1\n',
    );
  });
});

// A merge queue whose read Trunk answers 403, through a real exporter holding an API key. Trunk's
// definition: "`403 INSUFFICIENT_PERMISSIONS` means the credential is valid but is not permitted the
// action (or carries no organization)", while "An authorization denial on a read is reported as
// `404`, not `403` — … a resource in another organization is indistinguishable from one that does
// not exist"; and trunk-api-v2.md: "A key with no permissions reads merge queues, pull requests,
// repositories, Trunk's metrics and every flaky-test read endpoint". So the failed poll's advice is
// about the key's permissions or organization, never that it belongs to another organization.
import { afterEach, describe, expect, it } from 'vitest';
import { configYaml, startTestExporter } from './support/exporterHarness.js';
import { sum } from './support/exposition.js';
import { pageAt, startFakeV2 } from './support/fakeTrunkV2.js';
import { cleanUp } from './trunk/harness.js';

afterEach(cleanUp);

const WEB_MAIN = { repo: 'github.com/Acme/Web', branch: 'main' };

describe('a queue read answered 403 through API v2', () => {
  it('fails the poll with advice on the key’s permissions and organization, not another organization’s key', async () => {
    const fake = await startFakeV2({ queues: pageAt('merge-queues-of-an-organization.json') });
    fake.fail(/^\/v2\/merge-queues\/xK9mP2nQ\/pull-requests$/, 403);
    const exporter = await startTestExporter(
      configYaml({
        apiUrl: fake.origin,
        token: null,
        apiKey: 'trunk_v2_forbidden-key',
        targets: '  - repo: github.com/Acme/Web\n    branches: [main]',
        polling: '  mergeQueueIntervalSeconds: 0.2\n  flakyTestsIntervalSeconds: 600',
      }),
    );
    const failed = () =>
      exporter
        .logs()
        .split('\n')
        .filter((line) => line.includes('"status":403'))
        .map((line) => JSON.parse(line) as { check?: string });
    // The first poll's failure (the target is down before it too: no poll has succeeded).
    await exporter.waitFor(() => failed().length > 0, 'a poll failed with 403');
    expect(sum(await exporter.samples(), 'trunk_exporter_target_up', WEB_MAIN)).toBe(0);
    expect(failed()[0]?.check).toBe(
      'Trunk answered 403 for github.com/Acme/Web: the API key is valid but not permitted this read, ' +
        'or carries no organization (a key without permissions reads every list the exporter reads): ' +
        "check that trunk.apiKey, trunk.apiKeyFile or TRUNK_API_KEY is an organization's API key " +
        '(Settings → Developer → API Keys)',
    );
  });
});

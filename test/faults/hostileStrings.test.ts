// Hostile strings from configuration and from the API (repository and branch names, code owners
// with quotes, backslashes, newlines, markup and non-ASCII): the metrics page stays valid for
// promtool and a real Prometheus, which reads back every value exactly, and the landing page
// escapes them all.
import { describe, expect, it } from 'vitest';
import type { Fault } from '../../src/simulator/faults.js';
import type { SimulatedRepository } from '../../src/simulator/repositories.js';
import { parseExposition, select } from '../support/exposition.js';
import { startPrometheus, type RunningPrometheus } from '../support/prometheus.js';
import { promtoolCheckMetrics } from '../support/promtool.js';
import { findSystemBinary } from '../support/systemBinary.js';
import { startFaultRig, until, type FaultRig } from './harness.js';

const REPO = { host: 'github.com', owner: "ac'me", name: 'we"b\\x<b>' } as const;
const REPO_NAME = `${REPO.host}/${REPO.owner}/${REPO.name}`;
const BRANCHES = ['rel"ease\\1\nnext', 'ünïcødé-🚀', '<script>alert(1)</script>'] as const;
/** A code owner is a label value: one longer than 200 characters is cut to 199 and `…`. */
const LONG_OWNER = `@acme/${'long-team-'.repeat(60)}`;
const OWNERS = [
  '@acme/"quoted"',
  'C:\\owners\\',
  'line\nbreak',
  'équipe-日本',
  'tab\there',
  LONG_OWNER,
];
/** The owners as labels: as sent, the long one cut. */
const OWNER_LABELS = new Set([...OWNERS.slice(0, -1), `${LONG_OWNER.slice(0, 199)}…`]);
/** An API error body that is text with markup inside (so the excerpt keeps the markup). */
const ERROR_BODY = 'broken <img src=x onerror="alert(1)">';

const HOSTILE: SimulatedRepository = { ...REPO, branches: BRANCHES };

/**
 * Every quarantined test gets one of `owners`, in turn; `seen` holds how many tests the last
 * answer listed.
 */
function ownersInTurn(owners: readonly string[], seen = { tests: 0 }): Fault {
  return {
    kind: 'answer',
    answer: (_request, real) => {
      const page = structuredClone(real) as { quarantined_tests: { codeowners: string[] }[] };
      page.quarantined_tests.forEach((test, index) => {
        test.codeowners = [owners[index % owners.length] ?? ''];
      });
      seen.tests = page.quarantined_tests.length;
      return page;
    },
  };
}

async function hostileRig(owners: Fault = ownersInTurn(OWNERS)): Promise<FaultRig> {
  const rig = await startFaultRig({
    repositories: [HOSTILE],
    // JSON strings are YAML double-quoted strings, escapes included.
    targets: [
      `  - repo: ${JSON.stringify(REPO)}`,
      `    branches: ${JSON.stringify(BRANCHES)}`,
      '    flakyTests: true',
    ].join('\n'),
  });
  rig.faults.inject('flaky-tests/list-quarantined-tests', owners, { times: Infinity });
  await rig.subject.waitUntilReady();
  await rig.subject.waitFor(
    (samples) => select(samples, 'trunk_flaky_tests_quarantined_by_codeowner').length > 0,
    'the code owners',
  );
  return rig;
}

describe('hostile strings', () => {
  const promtool = findSystemBinary('promtool', 'prometheus');
  it.skipIf(promtool === undefined)(
    'label values round-trip through the page, and promtool accepts it',
    async () => {
      const rig = await hostileRig();
      const page = await rig.subject.scrape();
      expect(await promtoolCheckMetrics(promtool ?? 'promtool', page)).toEqual({
        code: 0,
        output: '',
      });
      const samples = parseExposition(page);
      const branches = select(samples, 'trunk_exporter_target_up', { kind: 'merge_queue' });
      expect(new Set(branches.map((s) => [s.labels.repo, s.labels.branch].join(' @ ')))).toEqual(
        new Set(BRANCHES.map((branch) => `${REPO_NAME} @ ${branch}`)),
      );
      const owners = select(samples, 'trunk_flaky_tests_quarantined_by_codeowner');
      expect(new Set(owners.map((sample) => sample.labels.codeowner))).toEqual(OWNER_LABELS);
    },
  );

  const prometheus = findSystemBinary('prometheus', 'prometheus');

  /**
   * A real Prometheus scraping the rig's exporter, once it has stored a scrape whole: as many
   * series as the scrape read samples, none dropped as a duplicate of another. `at` is an instant
   * (epoch s) that sees that scrape: queried later, a scrape that timed out on a busy machine since
   * would have marked every series stale.
   */
  async function prometheusScraping(
    rig: FaultRig,
  ): Promise<{ server: RunningPrometheus; at: number }> {
    const server = await startPrometheus({
      binary: prometheus ?? 'prometheus',
      scrapeTarget: new URL(rig.subject.exporter.url).host,
      intervalSeconds: 0.2,
    });
    const deadline = Date.now() + 20_000;
    let scraped: string | undefined;
    let stored: string | undefined;
    let at = 0;
    while (scraped === undefined || scraped !== stored) {
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(
          `Prometheus read ${scraped ?? 'no'} samples but stored ${stored ?? 'none'}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      at = Date.now() / 1000;
      [scraped] = (await server.query('scrape_samples_scraped', at)).map((s) => s.value[1]);
      const storedSeries = 'count({job="trunk-exporter",__name__!~"up|scrape_.+"})';
      [stored] = (await server.query(storedSeries, at)).map((s) => s.value[1]);
    }
    return { server, at };
  }

  it.skipIf(prometheus === undefined)(
    'a real Prometheus scrapes the page and stores every value exactly',
    async () => {
      const rig = await hostileRig();
      const { server, at } = await prometheusScraping(rig);
      try {
        const owners = await server.query('trunk_flaky_tests_quarantined_by_codeowner', at);
        const up = await server.query('up{job="trunk-exporter"}', at);
        expect(up.map((sample) => sample.value[1])).toEqual(['1']);
        expect(new Set(owners.map((sample) => sample.metric.codeowner))).toEqual(OWNER_LABELS);
        expect(new Set(owners.map((sample) => sample.metric.repo))).toEqual(new Set([REPO_NAME]));
        const targets = await server.query('trunk_exporter_target_up{kind="merge_queue"}', at);
        expect(new Set(targets.map((sample) => sample.metric.branch))).toEqual(new Set(BRANCHES));
      } finally {
        await server.stop();
      }
    },
  );

  it.skipIf(prometheus === undefined)(
    'code owners differing only in a lone surrogate are one series, and Prometheus drops no sample',
    async () => {
      // `"\uD800"` in JSON is half a surrogate pair: no UTF-8 text holds it, so it is U+FFFD.
      const seen = { tests: 0 };
      const rig = await hostileRig(ownersInTurn(['lone\uD800', 'lone\uDBFF'], seen));
      const { server, at } = await prometheusScraping(rig);
      try {
        const owners = await server.query('trunk_flaky_tests_quarantined_by_codeowner', at);
        expect(seen.tests).toBeGreaterThan(1);
        expect(owners.map((s) => [s.metric.codeowner, s.value[1]])).toEqual([
          ['lone\uFFFD', String(seen.tests)],
        ]);
      } finally {
        await server.stop();
      }
    },
  );

  it('the landing page escapes names and API error text, and sends its security headers', async () => {
    const rig = await hostileRig();
    const broken: Fault = { kind: 'status', status: 500, body: ERROR_BODY };
    rig.faults.inject('getQueue', broken, { times: Infinity });
    // A poll running late shows a queue down too, before its error is known: wait for the 500.
    await until(
      () =>
        rig.subject.exporter.store
          .statuses()
          .every(
            (status) =>
              status.target.kind !== 'merge_queue' ||
              (status.up === false && status.lastError?.includes('HTTP 500') === true),
          ),
      'every queue failing with the 500',
    );
    const response = await fetch(`${rig.subject.exporter.url}/`);
    const html = await response.text();

    expect(Object.fromEntries(response.headers)).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': expect.stringContaining("default-src 'none'") as string,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
    });
    // The only tags are the page's own: no <script>, no <img>, no <b> from the data.
    expect(html).not.toMatch(/<(script|img|b)[\s>]/i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('github.com/ac&#39;me/we&quot;b\\x&lt;b&gt;');
    expect(html).toContain('rel&quot;ease\\1\nnext');
    expect(html).toContain('ünïcødé-🚀');
    // Without basic auth the API's error text stays off the page: its status and request id show.
    expect(html).not.toContain('onerror');
    expect(html).toMatch(/HTTP 500, request id sim-\d+/);
  });
});

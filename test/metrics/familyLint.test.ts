// Every family rendered against every fixture, through the production page in both formats, and
// checked the way Prometheus reads it: no duplicate series, every sample under its family's HELP
// and TYPE, names and label names Prometheus accepts, per-target families labelled with their
// target. The checks are shown to fail on the definition that once slipped through: an unlabelled
// per-target gauge, rendered once per target.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { advanceQueueFlow, startQueueFlow } from '../../src/flow/queueFlow.js';
import type { ExpositionFormat } from '../../src/metrics/exposition.js';
import { SNAPSHOT_FAMILIES } from '../../src/metrics/families.js';
import type { FamilyDefinition } from '../../src/metrics/family.js';
import { MetricsPage } from '../../src/metrics/metricsPage.js';
import { SnapshotFamilies } from '../../src/metrics/snapshotFamilies.js';
import type { MergeQueueSnapshot, PullRequestSnapshot } from '../../src/snapshot/types.js';
import type { WebhookEvent } from '../../src/trunk/webhookEvents.js';
import { foldWebhookEvent } from '../../src/webhooks/webhookCounting.js';
import { renderPage } from './page.js';
import {
  acrossRepositories,
  FLAKY_TESTS_INTERVAL_SECONDS,
  loadScenario,
  MERGE_QUEUE_INTERVAL_SECONDS,
  replayScenario,
  TEST_VERSION,
} from './scenario.js';
import type { ReplayedScenario } from './scenario.js';

/** The PR that leaves between two polls in addQueueFlows. */
const LEAVING: PullRequestSnapshot = {
  number: 999_999,
  state: 'testing',
  priorityName: 'medium',
  stateChangedAt: undefined,
  blockedReasons: [],
};

const FIXTURES = readdirSync(join(import.meta.dirname, 'fixtures'))
  .filter((file) => file.endsWith('.json'))
  .map((file) => file.slice(0, -'.json'.length));

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** A label set: quoted values may hold braces, commas and `#`. */
const LABELS = String.raw`\{(?:[^"{}]|"(?:[^"\\]|\\.)*")*\}`;
/** A sample, and in OpenMetrics an exemplar after it: `# {labels} value [timestamp]`. */
const SAMPLE_LINE = new RegExp(
  `^([a-zA-Z_:][a-zA-Z0-9_:]*)(${LABELS})? (\\S+)(?: # (${LABELS}) \\S+(?: \\S+)?)?$`,
);
const LABEL_PAIR = /([^=,{}]+)="((?:[^"\\]|\\.)*)"/g;

/** What is wrong with the definitions themselves. */
function definitionProblems(definitions: readonly FamilyDefinition[]): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  for (const { name, type, labelNames, scope } of definitions) {
    if (names.has(name)) problems.push(`${name}: defined twice`);
    names.add(name);
    if (!METRIC_NAME.test(name)) problems.push(`${name}: not a valid metric name`);
    for (const label of labelNames) {
      if (!LABEL_NAME.test(label) || label.startsWith('__')) {
        problems.push(`${name}: label name ${JSON.stringify(label)} is not valid`);
      }
      if (type === 'histogram' && label === 'le') problems.push(`${name}: a histogram with le`);
    }
    if (new Set(labelNames).size !== labelNames.length) problems.push(`${name}: a label twice`);
    if (scope === 'target' && !labelNames.includes('repo')) {
      problems.push(`${name}: per target but without the target's labels`);
    }
    if (type === 'counter' && !name.endsWith('_total'))
      problems.push(`${name}: counter without _total`);
    if (type !== 'counter' && name.endsWith('_total'))
      problems.push(`${name}: _total on a ${type}`);
    if (type === 'info' && !name.endsWith('_info')) problems.push(`${name}: info without _info`);
  }
  return problems;
}

/** The sample names a family may write, in `format`, from its TYPE line's name and type. */
function sampleNames(family: string, type: string): string[] {
  switch (type) {
    case 'histogram':
      return [`${family}_bucket`, `${family}_sum`, `${family}_count`];
    case 'counter':
      return family.endsWith('_total') ? [family] : [`${family}_total`];
    case 'info':
      return family.endsWith('_info') ? [family] : [`${family}_info`];
    default:
      return [family];
  }
}

/** What Prometheus would reject, or read wrongly, on a page. */
function pageProblems(page: string, format: ExpositionFormat): string[] {
  const problems: string[] = [];
  const seenFamilies = new Set<string>();
  const seenSeries = new Set<string>();
  let help: string | undefined;
  let family: { name: string; type: string; samples: number } | undefined;
  const closeFamily = (): void => {
    if (family !== undefined && family.samples === 0) problems.push(`${family.name}: no samples`);
  };
  const lines = page.split('\n');
  if (lines.pop() !== '') problems.push('the page does not end in a newline');
  if (format === 'openmetrics' && lines.pop() !== '# EOF') problems.push('no # EOF at the end');
  for (const line of lines) {
    const helpMatch = /^# HELP (\S+) (.*)$/.exec(line);
    if (helpMatch) {
      closeFamily();
      family = undefined;
      help = helpMatch[1];
      if ((helpMatch[2] ?? '').trim() === '') problems.push(`${help ?? ''}: empty HELP`);
      continue;
    }
    const typeMatch = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (typeMatch) {
      const [, name = '', type = ''] = typeMatch;
      if (name !== help)
        problems.push(`${name}: TYPE without its HELP (HELP was ${help ?? 'none'})`);
      if (seenFamilies.has(name)) problems.push(`${name}: family appears twice`);
      seenFamilies.add(name);
      const types =
        format === 'openmetrics'
          ? ['counter', 'gauge', 'histogram', 'summary', 'stateset', 'info', 'unknown']
          : ['counter', 'gauge', 'histogram', 'summary', 'untyped'];
      if (!types.includes(type)) problems.push(`${name}: type ${type} in ${format}`);
      family = { name, type, samples: 0 };
      help = undefined;
      continue;
    }
    if (line.startsWith('#')) {
      problems.push(`unexpected comment: ${line}`);
      continue;
    }
    const sample = SAMPLE_LINE.exec(line);
    if (!sample) {
      problems.push(`not a sample line: ${line}`);
      continue;
    }
    const [, name = '', labels = '', , exemplar] = sample;
    if (exemplar !== undefined) problems.push(...exemplarProblems(name, exemplar, format));
    if (family === undefined || !sampleNames(family.name, family.type).includes(name)) {
      problems.push(`${name}: sample outside its family (${family?.name ?? 'none'})`);
    } else {
      family.samples++;
    }
    const labelNames = [...labels.matchAll(LABEL_PAIR)].map((pair) => pair[1] ?? '');
    for (const label of labelNames) {
      if (!LABEL_NAME.test(label)) problems.push(`${name}: label name ${label}`);
    }
    if (new Set(labelNames).size !== labelNames.length) problems.push(`${line}: a label twice`);
    const series = `${name}${labels}`;
    if (seenSeries.has(series)) problems.push(`duplicate series: ${series}`);
    seenSeries.add(series);
  }
  closeFamily();
  return problems;
}

/**
 * What is wrong with an exemplar on a sample `name`: OpenMetrics only, on a histogram's bucket
 * here, and "The combined length of the label names and values of an Exemplar's LabelSet MUST NOT
 * exceed 128 UTF-8 character code points" (OpenMetrics 1.0).
 */
function exemplarProblems(name: string, labels: string, format: ExpositionFormat): string[] {
  if (format !== 'openmetrics') return [`${name}: an exemplar in the ${format} format`];
  if (!name.endsWith('_bucket')) return [`${name}: an exemplar on a sample that is not a bucket`];
  const characters = [...labels.matchAll(LABEL_PAIR)]
    .map(([, label = '', value = '']) => Array.from(label + value.replace(/\\(.)/g, '$1')).length)
    .reduce((sum, length) => sum + length, 0);
  return characters > 128
    ? [`${name}: an exemplar's labels of ${String(characters)} code points`]
    : [];
}

function families(definitions: readonly FamilyDefinition[]): SnapshotFamilies {
  return new SnapshotFamilies({
    settings: {
      mergeQueueIntervalSeconds: MERGE_QUEUE_INTERVAL_SECONDS,
      flakyTestsIntervalSeconds: FLAKY_TESTS_INTERVAL_SECONDS,
      topCodeowners: 3,
      version: TEST_VERSION,
    },
    selection: {},
    definitions,
  });
}

/**
 * Gives every fresh merge queue of the replay a flow ledger (the scenarios record none): one
 * earlier poll in which each PR was in another state and one more PR was queued, which then merged (held for its webhook event, webhooks being on).
 */
function addQueueFlows(replay: ReplayedScenario): void {
  for (const { target, snapshot } of replay.store.statuses()) {
    if (snapshot?.kind !== 'merge_queue') continue;
    const [first] = snapshot.pullRequests;
    const departed = { ...(first ?? LEAVING), number: LEAVING.number, state: 'testing' };
    const earlier: MergeQueueSnapshot = {
      ...snapshot,
      takenAt: snapshot.takenAt - MERGE_QUEUE_INTERVAL_SECONDS,
      pullRequests: [
        ...snapshot.pullRequests.map((pr) => ({
          ...pr,
          state: pr.state === 'pending' ? 'testing' : 'pending',
        })),
        departed,
      ],
    };
    // With webhooks on, as the exits-by-source family is shown then only.
    const options = {
      maxGapSeconds: 600,
      lookupRetrySeconds: 600,
      intervalSeconds: MERGE_QUEUE_INTERVAL_SECONDS,
      webhooks: true,
    };
    const flow = advanceQueueFlow(
      startQueueFlow(earlier),
      snapshot,
      new Map([[LEAVING.number, { outcome: 'merged' as const, leftAt: snapshot.takenAt }]]),
      options,
    );
    // The queue's testing attempts and entry histories (API v2 scenarios) stay: a poll that does
    // not carry them drops them.
    const { entryHistory } = replay.store.queueFlow(target) ?? {};
    replay.store.recordSuccess(
      target,
      snapshot,
      0.1,
      { ...flow, entryHistory },
      replay.store.testingAttempts(target),
    );
  }
}

/**
 * Gives every target of the replay a webhook ledger (the scenarios record none): for a queue a
 * failed PR with a reason and a batch event; for a quarantine list one of each flaky-test event.
 * Label values come from the target, so hostile repository names reach these families too.
 */
function addWebhookCounts(replay: ReplayedScenario): void {
  for (const { target } of replay.store.statuses()) {
    const repo = { host: 'github.com', owner: 'acme', name: 'x' };
    const events: WebhookEvent[] =
      target.kind === 'merge_queue'
        ? [
            {
              kind: 'pull_request',
              type: 'pull_request.failed',
              repo,
              repoName: target.repo,
              branch: target.branch,
              prNumber: 1,
              failureReason: `REASON "${target.branch}"\n`,
              batched: undefined,
              transitionSeconds: undefined,
            },
            {
              kind: 'pull_request_batch',
              type: 'pull_request_batch.merged',
              repo,
              repoName: target.repo,
              branch: target.branch,
              prNumbers: [1, 2],
              transitionSeconds: undefined,
            },
          ]
        : [
            {
              kind: 'flaky_tests',
              type: 'v2.test_case.status_changed',
              repoName: target.repo,
              previousStatus: 'healthy',
              newStatus: 'flaky',
              transitionSeconds: undefined,
            },
            {
              kind: 'flaky_tests',
              type: 'test_case.monitor_status_changed',
              repoName: target.repo,
              monitorType: 'pass_on_retry',
              monitorStatus: 'active',
              transitionSeconds: undefined,
            },
            {
              kind: 'flaky_tests',
              type: 'test_case.quarantining_setting_changed',
              repoName: target.repo,
              previousSetting: undefined,
              newSetting: 'ALWAYS_QUARANTINE',
              transitionSeconds: undefined,
            },
            {
              kind: 'flaky_tests',
              type: 'test_case.investigation_completed',
              repoName: target.repo,
              transitionSeconds: undefined,
            },
          ];
    for (const event of events) {
      replay.store.updateWebhookCounts(target, (ledger) => foldWebhookEvent(ledger, event, 0));
    }
  }
}

/** Every fixture's final page in `format`, rendered by the production page over `definitions`. */
async function pages(
  definitions: readonly FamilyDefinition[],
  format: ExpositionFormat,
): Promise<Map<string, string>> {
  const result = new Map<string, string>();
  for (const fixture of FIXTURES) {
    const replay = replayScenario(loadScenario(fixture), { defaultMetrics: true });
    addQueueFlows(replay);
    addWebhookCounts(replay);
    const page = new MetricsPage({
      registry: replay.registry,
      store: replay.store,
      snapshotMetrics: families(definitions),
    });
    result.set(fixture, await renderPage(page, format, { gzip: format === 'openmetrics' }));
  }
  return result;
}

describe('every family against every fixture', () => {
  it('has definitions Prometheus accepts, each per-target one labelled with its target', () => {
    expect(FIXTURES.length).toBeGreaterThanOrEqual(9);
    expect(definitionProblems(SNAPSHOT_FAMILIES)).toEqual([]);
  });

  it.each(['prometheus', 'openmetrics'] as const)(
    'renders pages without a duplicate series or a HELP/TYPE mismatch (%s)',
    async (format) => {
      const rendered = await pages(SNAPSHOT_FAMILIES, format);
      for (const [fixture, page] of rendered) {
        expect(pageProblems(page, format), fixture).toEqual([]);
      }
      // Every family has samples in some fixture, so each samples() above really ran.
      const all = [...rendered.values()].join('\n');
      for (const { name } of SNAPSHOT_FAMILIES)
        expect(all, name).toMatch(new RegExp(`^${name}`, 'm'));
    },
  );

  it('rejects an unlabelled per-target gauge: its definition, and the duplicate series it renders', async () => {
    const trap: FamilyDefinition = {
      name: 'trunk_merge_queue_pull_requests_everywhere',
      help: () => 'Pull requests in every merge queue.',
      type: 'gauge',
      labelNames: [],
      scope: 'target',
      samples: (status) =>
        status.snapshot?.kind === 'merge_queue'
          ? [{ labels: [], value: status.snapshot.pullRequests.length }]
          : [],
    };
    expect(definitionProblems([trap])).toEqual([
      "trunk_merge_queue_pull_requests_everywhere: per target but without the target's labels",
    ]);
    // Two merge queues: the unlabelled series is written once for each.
    const replay = replayScenario(acrossRepositories(loadScenario('normal-queue'), 2));
    const page = await renderPage(
      new MetricsPage({
        registry: replay.registry,
        store: replay.store,
        snapshotMetrics: families([trap]),
      }),
    );
    expect(pageProblems(page, 'prometheus')).toContain(
      'duplicate series: trunk_merge_queue_pull_requests_everywhere',
    );
  });

  it('rejects misnamed families and labels, and HELP/TYPE that do not match', () => {
    expect(
      definitionProblems([
        { ...SNAPSHOT_FAMILIES[0], name: 'trunk-merge-queue', labelNames: ['repo', 'le-vel'] },
      ] as FamilyDefinition[]),
    ).toEqual([
      'trunk-merge-queue: not a valid metric name',
      'trunk-merge-queue: label name "le-vel" is not valid',
    ]);
    expect(
      pageProblems('# HELP a_total A.\n# TYPE b_total counter\nb_total 1\n', 'prometheus'),
    ).toEqual(['b_total: TYPE without its HELP (HELP was a_total)']);
    expect(pageProblems('# HELP a A.\n# TYPE a gauge\nb 1\n', 'prometheus')).toEqual([
      'b: sample outside its family (a)',
      'a: no samples',
    ]);
  });
});

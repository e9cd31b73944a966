// An exporter of github.com/acme/web main holding an API key and polling a fake organization
// (queueEntryRows.ts) whose verification runs a test concludes by hand, and what its page shows of
// the run families.
import { select, type Sample } from './exposition.js';
import { configYaml, startTestExporter } from './exporterHarness.js';
import type { FakeV2 } from './fakeTrunkV2.js';
import { WEB_QUEUE } from './queueEntryRows.js';
import { run, type RunShape } from './verificationRunRows.js';
import { WEB_MAIN } from './webQueueSamples.js';

export const RUNS = 'trunk_merge_queue_verification_runs_total';
export const IN_PROGRESS = 'trunk_merge_queue_verification_runs_in_progress';
export const DURATION = 'trunk_merge_queue_verification_run_duration_seconds';
export const BATCH = 'trunk_merge_queue_batch_size';
export const CHECKS = 'trunk_merge_queue_check_failures_total';

/** Replaces run `id` of the web queue by `shape` (Trunk concluding it). */
export function conclude(fake: FakeV2, shape: RunShape): void {
  const runs = fake.verificationRuns(WEB_QUEUE);
  const at = runs.findIndex((row) => (row as { id?: string }).id === shape.id);
  runs.splice(at, 1, run(shape));
}

/** An exporter of the web queue polling every 0.1 s; `extra` is appended to its YAML. */
export function webRunsExporter(fake: FakeV2, extra = '') {
  return startTestExporter(
    configYaml({
      apiUrl: fake.origin,
      token: null,
      apiKey: 'trunk_v2_verification-runs-key',
      targets: '  - repo: github.com/acme/web\n    branches: [main]',
      polling:
        '  mergeQueueIntervalSeconds: 0.1\n  flakyTestsIntervalSeconds: 600\n  staleAfterSeconds: 3',
    }) + extra,
  );
}

/** Each series of `name` for the web queue: the values of `labels` (comma-separated) joined by `/` → its value. */
export function series(samples: readonly Sample[], name: string, labels: string) {
  return Object.fromEntries(
    select(samples, name, WEB_MAIN).map((sample): [string, number] => [
      labels
        .split(',')
        .map((key) => sample.labels[key] ?? '')
        .join('/'),
      sample.value,
    ]),
  );
}

/** The `createdAfter` of each read of the web queue's runs the fake received. */
export function runReads(fake: FakeV2): string[] {
  return fake
    .requestsTo(/^\/v2\/merge-queues\/[^/]+\/verification-runs$/)
    .map((request) => new URL(request.url, 'http://fake').searchParams.get('createdAfter') ?? '');
}

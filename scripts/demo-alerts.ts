// `node scripts/demo-alerts.ts [--minutes N]`: which alerts the demo raises after a start and after a
// restart. Runs the built demo (`bin/trunk-exporter.js --demo`) and a real Prometheus (scrape and
// rule evaluation every 5 s, prometheus/rules.yaml and prometheus/alerts.yaml) and polls
// /api/v1/alerts for N minutes (default 15); then starts a new demo process, as a pod restart
// would, with a new `pod` label, and watches N minutes more. Each alert seen is matched to the
// scripted incident of src/simulator/incidents.ts that names it on its repository (and branch).
// Exits 1 when an alert no incident explains fired, or when an incident's alert never showed
// (pending or firing) and is not one that cannot show so early (NOT_SHOWN_AT_START); unexplained
// pending alerts are listed too. Takes about 2N minutes: run it on an idle machine, never in
// `npm test`. Needs `npm run build` and `prometheus`.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type * as IncidentsModule from '../src/simulator/incidents.js';
import { ROOT, loadBuilt } from './bench/built.ts';
import { freePort, startChild, temporaryDirectory, waitForOk } from './bench/processes.ts';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '15' } } });
const watchSeconds = Number(values.minutes) * 60;
const POLL_SECONDS = 5;

const { DEMO_INCIDENTS } = await loadBuilt<typeof IncidentsModule>('simulator/incidents.js');
type Incident = (typeof DEMO_INCIDENTS)[number];

/** Incidents whose alert cannot even go pending within minutes of a start, and why. */
const NOT_SHOWN_AT_START: Partial<Record<Incident['kind'], string>> = {
  stalled_queue:
    'TrunkMergeQueueStalled needs an hour of PRs seen waiting in the running queue; the stall the ' +
    'demo starts in ends 25 minutes in, the next (every 3 hours) fires 65 minutes into it',
};

interface PrometheusAlert {
  readonly labels: Record<string, string>;
  readonly state: 'pending' | 'firing';
}
interface Sighting {
  readonly alert: string;
  readonly labels: Record<string, string>;
  pendingAt: number | undefined;
  firingAt: number | undefined;
}

const directory = temporaryDirectory('demo-alerts');
const targetsFile = join(directory, 'targets.json');
const exporterPort = await freePort();
const prometheusPort = await freePort();
const prometheusUrl = `http://127.0.0.1:${prometheusPort}`;
writeFileSync(
  join(directory, 'prometheus.yaml'),
  JSON.stringify({
    global: { scrape_interval: `${POLL_SECONDS}s`, evaluation_interval: `${POLL_SECONDS}s` },
    rule_files: [join(ROOT, 'prometheus/rules.yaml'), join(ROOT, 'prometheus/alerts.yaml')],
    scrape_configs: [
      {
        job_name: 'trunk-exporter',
        file_sd_configs: [{ files: [targetsFile], refresh_interval: `${POLL_SECONDS}s` }],
      },
    ],
  }),
);
/** Points Prometheus at the exporter's port under a `pod` label, as Kubernetes service discovery would. */
const scrapeAs = (pod: string) => {
  writeFileSync(
    targetsFile,
    JSON.stringify([{ targets: [`127.0.0.1:${exporterPort}`], labels: { pod } }]),
  );
};
writeFileSync(targetsFile, '[]');

const prometheus = await startChild(
  'prometheus',
  [
    `--config.file=${join(directory, 'prometheus.yaml')}`,
    `--storage.tsdb.path=${join(directory, 'data')}`,
    `--web.listen-address=127.0.0.1:${prometheusPort}`,
  ],
  { ready: /Server is ready to receive web requests/ },
);

/**
 * The incident that explains an alert: it names the alert (or drives it on the way), on the
 * alert's repository and branch; an alert of a whole endpoint names none.
 */
const explainedBy = (sighting: Sighting): Incident | undefined =>
  DEMO_INCIDENTS.find(
    (incident) =>
      (incident.alert === sighting.alert || incident.alsoDrives?.includes(sighting.alert)) &&
      (sighting.labels.repo === undefined ||
        (incident.repo === sighting.labels.repo &&
          (incident.branch === '' || incident.branch === sighting.labels.branch))),
  );

/** Watches /api/v1/alerts for watchSeconds after a new demo process starts, scraped as `pod`. */
async function watchDemo(pod: string): Promise<Sighting[]> {
  scrapeAs(pod);
  const demo = await startChild(
    process.execPath,
    ['bin/trunk-exporter.js', '--demo', '--port', String(exporterPort)],
    { ready: /metrics on http/ },
  );
  const startedAt = Date.now();
  const sightings = new Map<string, Sighting>();
  try {
    await waitForOk(`http://127.0.0.1:${exporterPort}/readyz`);
    while (Date.now() - startedAt < watchSeconds * 1000) {
      await new Promise((resolve) => setTimeout(resolve, POLL_SECONDS * 1000));
      const body = (await (await fetch(`${prometheusUrl}/api/v1/alerts`)).json()) as {
        data: { alerts: PrometheusAlert[] };
      };
      const at = (Date.now() - startedAt) / 1000;
      for (const { labels, state } of body.data.alerts) {
        // Alerts of the previous process resolve once its series go stale; they are not this one's.
        if (labels.pod !== undefined && labels.pod !== pod) continue;
        const { alertname = '', ...rest } = labels;
        const key = JSON.stringify(labels);
        const sighting = sightings.get(key) ?? {
          alert: alertname,
          labels: rest,
          pendingAt: undefined,
          firingAt: undefined,
        };
        sighting.pendingAt ??= at;
        if (state === 'firing') sighting.firingAt ??= at;
        sightings.set(key, sighting);
      }
    }
  } finally {
    await demo.stop();
  }
  return [...sightings.values()];
}

const minutes = (seconds: number | undefined) =>
  seconds === undefined
    ? '-'
    : `${Math.floor(seconds / 60)}:${String(Math.round(seconds % 60)).padStart(2, '0')}`;

/** Prints one run's alerts and what was missing; returns the problems found. */
function report(title: string, sightings: readonly Sighting[]): string[] {
  const problems: string[] = [];
  console.log(`\n${title}: alerts within ${values.minutes} minutes (pending at, firing at)`);
  for (const sighting of sightings.toSorted((a, b) => (a.pendingAt ?? 0) - (b.pendingAt ?? 0))) {
    const incident = explainedBy(sighting);
    const where = [sighting.labels.repo, sighting.labels.branch, sighting.labels.endpoint]
      .filter((part) => part !== undefined && part !== '')
      .join(' ');
    const line = `${sighting.alert} ${where}: ${minutes(sighting.pendingAt)}, ${minutes(sighting.firingAt)}`;
    console.log(`  ${line} ${incident === undefined ? 'UNEXPLAINED' : `(${incident.kind})`}`);
    if (incident === undefined && sighting.firingAt !== undefined)
      problems.push(`${title}: ${line} fired, explained by no incident`);
  }
  for (const incident of DEMO_INCIDENTS) {
    const shown = sightings.some(
      (sighting) => sighting.alert === incident.alert && explainedBy(sighting) === incident,
    );
    if (shown) continue;
    const reason = NOT_SHOWN_AT_START[incident.kind];
    console.log(`  ${incident.alert} (${incident.kind}): not shown; ${reason ?? 'UNEXPECTED'}`);
    if (reason === undefined) problems.push(`${title}: ${incident.alert} never showed`);
  }
  return problems;
}

try {
  await waitForOk(`${prometheusUrl}/-/ready`);
  const first = await watchDemo('demo-1');
  const restarted = await watchDemo('demo-2');
  const problems = [...report('start', first), ...report('restart', restarted)];
  console.log(problems.length === 0 ? '\nOK' : `\n${problems.join('\n')}`);
  process.exitCode = problems.length === 0 ? 0 : 1;
} finally {
  await prometheus.stop();
}

// A page's cost by family: series and bytes (HELP and TYPE included) and of those the exemplars,
// read from the exposition text itself, and the merge queues the page shows.

/** What one family costs on a page. */
export interface FamilyCost {
  name: string;
  series: number;
  bytes: number;
  exemplars: number;
  exemplarBytes: number;
}

/**
 * A page's families with what each costs, how many merge queues it shows (and how many up), and how
 * many flaky-tests targets (and how many up).
 */
export function pageCosts(page: string): {
  queues: number;
  up: number;
  flakyTargets: number;
  flakyUp: number;
  families: FamilyCost[];
} {
  const families = new Map<string, FamilyCost>();
  const queues = new Set<string>();
  let up = 0;
  let flakyTargets = 0;
  let flakyUp = 0;
  let family: FamilyCost | undefined;
  for (const line of page.split('\n')) {
    if (line === '' || line === '# EOF') continue;
    const help = /^# HELP (\S+)/.exec(line);
    if (help !== null) {
      const name = help[1] ?? '';
      family = families.get(name) ?? { name, series: 0, bytes: 0, exemplars: 0, exemplarBytes: 0 };
      families.set(name, family);
    }
    // OpenMetrics names a counter's family without `_total` (an info's without `_info`): the
    // exporter's name is the one docs/metrics.md lists.
    const type = /^# TYPE \S+ (counter|info)$/.exec(line)?.[1];
    if (
      family !== undefined &&
      type !== undefined &&
      !family.name.endsWith(`_${type === 'counter' ? 'total' : 'info'}`)
    ) {
      family.name += type === 'counter' ? '_total' : '_info';
    }
    if (family === undefined) continue;
    family.bytes += Buffer.byteLength(line) + 1;
    if (line.startsWith('#')) continue;
    family.series += 1;
    // An exemplar follows its sample's value: ` # {…} value [timestamp]` after the closing brace.
    const exemplar = /\} \S+( # \{.*)$/.exec(line)?.[1];
    if (exemplar !== undefined) {
      family.exemplars += 1;
      family.exemplarBytes += Buffer.byteLength(exemplar);
    }
    if (line.startsWith('trunk_exporter_target_up{') && line.includes('kind="merge_queue"')) {
      queues.add(/^[^{]*\{([^}]*),kind=/.exec(line)?.[1] ?? line);
      if (line.endsWith(' 1')) up += 1;
    }
    if (line.startsWith('trunk_exporter_target_up{') && line.includes('kind="flaky_tests"')) {
      flakyTargets += 1;
      if (line.endsWith(' 1')) flakyUp += 1;
    }
  }
  return { queues: queues.size, up, flakyTargets, flakyUp, families: [...families.values()] };
}

// A small parser for the Prometheus text format, so tests can assert on values by name and labels
// instead of on substrings of the page.

/** One sample line of an exposition page. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses every sample line of a Prometheus text page. */
export function parseExposition(page: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of page.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const [, name = '', labelText = '', value = ''] = match;
    const labels: Record<string, string> = {};
    for (const label of labelText.matchAll(LABEL)) {
      labels[label[1] ?? ''] = (label[2] ?? '').replace(/\\(.)/g, (_all, char: string) =>
        char === 'n' ? '\n' : char,
      );
    }
    samples.push({ name, labels, value: Number(value) });
  }
  return samples;
}

/** Samples of one metric whose labels include every given label. */
export function select(
  samples: readonly Sample[],
  name: string,
  labels: Readonly<Record<string, string>> = {},
): Sample[] {
  return samples.filter(
    (sample) =>
      sample.name === name &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** Sum of the values of the selected samples. */
export function sum(
  samples: readonly Sample[],
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number {
  return select(samples, name, labels).reduce((total, sample) => total + sample.value, 0);
}

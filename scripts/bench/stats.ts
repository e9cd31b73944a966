// Small numeric and formatting helpers shared by the benchmark modules.

/** The median of some numbers (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** The least-squares slope of `ys` over `xs`: how fast a quantity rose over a run. */
export function slope(xs: readonly number[], ys: readonly number[]): number {
  const meanX = xs.reduce((sum, x) => sum + x, 0) / xs.length;
  const meanY = ys.reduce((sum, y) => sum + y, 0) / ys.length;
  let covariance = 0;
  let variance = 0;
  xs.forEach((x, index) => {
    covariance += (x - meanX) * ((ys[index] ?? meanY) - meanY);
    variance += (x - meanX) ** 2;
  });
  return variance === 0 ? 0 : covariance / variance;
}

/** A number with a fixed count of decimals and thousands separators. */
export function format(value: number, decimals = 0): string {
  return value.toLocaleString('en-US', {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  });
}

/** Bytes as MB (10^6), one decimal. */
export function megabytes(bytes: number): string {
  return `${format(bytes / 1e6, 1)} MB`;
}

/** A markdown table from a header row and rows of cells. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Writes a progress line to stderr, so a long run shows where it is. */
export function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

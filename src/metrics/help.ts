// HELP texts say how fresh a value can be: a gauge refreshed every hour must not be read like one
// refreshed every scrape.

/** HELP suffix naming the polled operation and its interval, e.g. "Refreshed by polling getQueue every 30s." */
export function refreshedBy(operation: string, intervalSeconds: number): string {
  return `Refreshed by polling ${operation} every ${formatInterval(intervalSeconds)}.`;
}

/** Formats a duration the way Prometheus configuration does: 30s, 5m, 1h30m, 0.5s. */
export function formatInterval(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) return `${seconds}s`;
  if (!Number.isInteger(seconds)) return `${seconds}s`;
  const parts: string[] = [];
  let rest = seconds;
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (rest > 0) parts.push(`${rest}s`);
  return parts.join('');
}

/** Unix seconds of an ISO 8601 timestamp, or undefined when it does not parse. */
export function parseTimestampSeconds(value: string | null | undefined): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const milliseconds = Date.parse(value);
  return Number.isNaN(milliseconds) ? undefined : milliseconds / 1000;
}

// Timestamps in API responses. Only RFC 3339 date-times with a zone are timestamps: Date.parse also
// takes "1", "-1", "Tue 5" and "2024-02-30", each a different instant or none at all.
import { z } from 'zod';

const RFC_3339_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** Earliest instant exported as a timestamp (2000-01-01T00:00:00Z), in epoch milliseconds. */
export const EARLIEST_EXPORTED_MS = Date.UTC(2000, 0, 1);
/** First instant after the last exported one (2101-01-01T00:00:00Z): years 2000 to 2100 pass. */
export const AFTER_LATEST_EXPORTED_MS = Date.UTC(2101, 0, 1);

/** Epoch milliseconds of an RFC 3339 date-time with a zone, or undefined for anything else. */
export function parseRfc3339(text: string): number | undefined {
  // Called for every timestamp of every response (a 31,000-call cycle parses about 60,000): the
  // fields are read one by one and the instant computed with Date.UTC, without building a Date.
  const match = RFC_3339_DATE_TIME.exec(text);
  if (match === null) return undefined;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  const hour = Number(match[4]);
  const minute = Number(match[5]);
  const second = Number(match[6]);
  const offsetSign = match[9] === '-' ? -1 : 1;
  const offsetHours = Number(match[10] ?? 0);
  const offsetMinutes = Number(match[11] ?? 0);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  // 60 is a leap second (RFC 3339 5.7); it is counted as the second before.
  if (hour > 23 || minute > 59 || second > 60 || offsetHours > 23 || offsetMinutes > 59) {
    return undefined;
  }
  const fraction = match[7] === undefined ? 0 : Number(match[7]) * 1000;
  const clockSecond = Math.min(second, 59);
  // Date.UTC maps years 0-99 to 1900-1999: those few are moved to their year apart.
  const epochMs =
    year >= 100
      ? Date.UTC(year, month - 1, day, hour, minute, clockSecond)
      : yearMoved(Date.UTC(2000, month - 1, day, hour, minute, clockSecond), year);
  return epochMs + fraction - offsetSign * (offsetHours * 60 + offsetMinutes) * 60_000;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  if (month !== 2) return DAYS_IN_MONTH[month - 1] ?? 0;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return leap ? 29 : 28;
}

/** `epochMs` (a day of 2000) moved to the same day and time of `year`, for years 0-99. */
function yearMoved(epochMs: number, year: number): number {
  const date = new Date(epochMs);
  date.setUTCFullYear(year);
  return date.getTime();
}

/** Whether `epochMs` is within the years 2000 to 2100, the only timestamps ever exported. */
export function isExportableMs(epochMs: number): boolean {
  return epochMs >= EARLIEST_EXPORTED_MS && epochMs < AFTER_LATEST_EXPORTED_MS;
}

/** Unix seconds of an RFC 3339 date-time within 2000-2100; undefined when absent or outside. */
export function exportableSeconds(text: string | null | undefined): number | undefined {
  if (text === undefined || text === null) return undefined;
  const epochMs = parseRfc3339(text);
  return epochMs !== undefined && isExportableMs(epochMs) ? epochMs / 1000 : undefined;
}

/** Whether `text` is a valid RFC 3339 date-time outside the exported years (an API anomaly). */
export function isOutOfExportBounds(text: string | null | undefined): boolean {
  if (text === undefined || text === null) return false;
  // Called for every PR of every queue: a year clear of both bounds (and of a zone offset
  // crossing one) decides without building a Date.
  const year = Number(text.slice(0, 4));
  if (year > 2000 && year < 2100) return false;
  const epochMs = parseRfc3339(text);
  return epochMs !== undefined && !isExportableMs(epochMs);
}

/** A response field holding an RFC 3339 date-time; anything else is a schema mismatch of it. */
export const rfc3339DateTimeSchema = z.string().refine((text) => parseRfc3339(text) !== undefined, {
  error: 'expected an RFC 3339 date-time with a time zone, e.g. 2025-12-01T09:30:00Z',
});

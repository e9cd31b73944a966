// Timestamps in API responses. Only ISO 8601 date-times with a zone are timestamps: Date.parse also
// takes "1", "-1", "Tue 5" and "2024-02-30", each a different instant or none at all.
import { z } from 'zod';

/** Earliest instant exported as a timestamp (2000-01-01T00:00:00Z), in epoch milliseconds. */
export const EARLIEST_EXPORTED_MS = Date.UTC(2000, 0, 1);
/** First instant after the last exported one (2101-01-01T00:00:00Z): years 2000 to 2100 pass. */
export const AFTER_LATEST_EXPORTED_MS = Date.UTC(2101, 0, 1);

/**
 * How far Trunk's clock may be from the exporter's: a row dated more than this after the exporter's
 * clock is dated in the future, and a read's watermark never passes the exporter's clock plus this,
 * so one row dated ahead (skew, a bad row) cannot make later reads skip what ends before it.
 */
export const CLOCK_SLACK_SECONDS = 60;

/**
 * How far back (Trunk's clock) a read of the rows since a time reaches before the newest row the
 * previous read saw: a row Trunk records late with an earlier timestamp is still read; one seen
 * before counts nothing.
 */
export const READ_OVERLAP_SECONDS = 120;

/**
 * Epoch milliseconds of an RFC 3339 date-time with a zone (and of ISO 8601's other spellings of
 * one in the extended format: a zone as ±hh, a decimal comma), or undefined for anything else.
 */
export function parseRfc3339(text: string): number | undefined {
  // Called for every timestamp of every response (a 31,000-call cycle parses about 60,000): read
  // character by character, which allocates nothing but a fraction's digits (a regular
  // expression's match array and its eleven strings were a visible share of that cycle's garbage),
  // and computed with Date.UTC.
  const length = text.length;
  if (length < 20) return undefined;
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return undefined;
  const separator = text.charCodeAt(10);
  if (
    text.charCodeAt(4) !== DASH ||
    text.charCodeAt(7) !== DASH ||
    (separator !== UPPER_T && separator !== LOWER_T) ||
    text.charCodeAt(13) !== COLON ||
    text.charCodeAt(16) !== COLON
  ) {
    return undefined;
  }
  let index = 19;
  let fraction = 0;
  // ISO 8601 takes a decimal comma as well as a point.
  const mark = text.charCodeAt(index);
  if (mark === DOT || mark === COMMA) {
    const start = index + 1;
    index = start;
    while (index < length && isDigit(text.charCodeAt(index))) index += 1;
    if (index === start) return undefined;
    fraction = Number(`0.${text.slice(start, index)}`) * 1000;
  }
  const zone = text.charCodeAt(index);
  let offsetMinutesTotal = 0;
  if (zone === UPPER_Z || zone === LOWER_Z) {
    if (index + 1 !== length) return undefined;
  } else if (zone === PLUS || zone === MINUS) {
    // ISO 8601's zone designators in the extended format: ±hh:mm (RFC 3339's) and ±hh (±hhmm
    // is the basic format's, which an extended date-time may not mix in).
    const offsetHours = digits(text, index + 1, 2);
    const after = length - (index + 3);
    const offsetMinutes =
      after === 0
        ? 0
        : after === 3 && text.charCodeAt(index + 3) === COLON
          ? digits(text, index + 4, 2)
          : -1;
    if (offsetHours < 0 || offsetMinutes < 0 || offsetHours > 23 || offsetMinutes > 59) {
      return undefined;
    }
    offsetMinutesTotal = (zone === MINUS ? -1 : 1) * (offsetHours * 60 + offsetMinutes);
  } else {
    return undefined;
  }
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  // 60 is a leap second (RFC 3339 5.7); it is counted as the second before.
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const clockSecond = Math.min(second, 59);
  // Date.UTC maps years 0-99 to 1900-1999: those few are moved to their year apart.
  const epochMs =
    year >= 100
      ? Date.UTC(year, month - 1, day, hour, minute, clockSecond)
      : yearMoved(Date.UTC(2000, month - 1, day, hour, minute, clockSecond), year);
  return epochMs + fraction - offsetMinutesTotal * 60_000;
}

const DASH = 0x2d;
const COLON = 0x3a;
const DOT = 0x2e;
const COMMA = 0x2c;
const PLUS = 0x2b;
const MINUS = 0x2d;
const UPPER_T = 0x54;
const LOWER_T = 0x74;
const UPPER_Z = 0x5a;
const LOWER_Z = 0x7a;

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/** The decimal number in `count` characters of `text` from `start`; -1 unless all are digits. */
function digits(text: string, start: number, count: number): number {
  let value = 0;
  for (let index = start; index < start + count; index++) {
    const code = text.charCodeAt(index);
    if (!isDigit(code)) return -1;
    value = value * 10 + (code - 0x30);
  }
  return value;
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

/** A response field holding an RFC 3339 date-time; anything else is a schema mismatch of it. */
export const rfc3339DateTimeSchema = z.string().refine((text) => parseRfc3339(text) !== undefined, {
  error: 'expected an RFC 3339 date-time with a time zone, e.g. 2025-12-01T09:30:00Z',
});

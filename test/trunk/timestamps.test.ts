// Which strings are timestamps: v1's "ISO 8601 date-time form with a time zone designator" (RFC
// 3339's, and ISO 8601's other extended-format spellings: a zone as ±hh, a decimal comma), and only
// those; and which of them may be exported (the years 2000 to 2100).
import { describe, expect, it } from 'vitest';
import { exportableSeconds, parseRfc3339 } from '../../src/trunk/timestamps.js';

describe('parseRfc3339', () => {
  it.each<[string, number]>([
    ['2025-12-01T09:30:00Z', Date.UTC(2025, 11, 1, 9, 30)],
    ['2025-12-01t09:30:00z', Date.UTC(2025, 11, 1, 9, 30)],
    ['2025-12-01T09:30:00.250Z', Date.UTC(2025, 11, 1, 9, 30, 0, 250)],
    ['2025-12-01T11:30:00+02:00', Date.UTC(2025, 11, 1, 9, 30)],
    ['2025-12-01T04:00:00-05:30', Date.UTC(2025, 11, 1, 9, 30)],
    ['2025-12-01T11:30:00+02', Date.UTC(2025, 11, 1, 9, 30)],
    ['2025-12-01T09:30:00,250Z', Date.UTC(2025, 11, 1, 9, 30, 0, 250)],
    ['2024-02-29T00:00:00Z', Date.UTC(2024, 1, 29)],
    ['2016-12-31T23:59:60Z', Date.UTC(2016, 11, 31, 23, 59, 59)],
    // Not read as 1901 (Date.UTC's two-digit years).
    ['0001-01-01T00:00:00Z', -62_135_596_800_000],
  ])('%s is a date-time', (text, epochMs) => {
    expect(parseRfc3339(text)).toBe(epochMs);
  });

  it.each([
    '1',
    '-1',
    'Tue 5',
    '2024-02-30T00:00:00Z',
    '2024-02-30',
    '2023-02-29T00:00:00Z',
    '2025-12-01',
    '2025-12-01T09:30:00',
    '2025-12-01 09:30:00Z',
    '2025-13-01T00:00:00Z',
    '2025-12-01T24:00:00Z',
    '2025-12-01T09:60:00Z',
    // The basic format's zone in an extended-format date-time.
    '2025-12-01T09:30:00+0200',
    '2025-12-01T09:30:00+2',
    '2025-12-01T09:30:00,Z',
    'Mon, 01 Dec 2025 09:30:00 GMT',
    '',
  ])('%j is not', (text) => {
    expect(parseRfc3339(text)).toBeUndefined();
  });
});

describe('exported timestamps', () => {
  it('are the years 2000 to 2100', () => {
    expect(exportableSeconds('2000-01-01T00:00:00Z')).toBe(946_684_800);
    expect(exportableSeconds('2100-12-31T23:59:59Z')).toBe(4_133_980_799);
    for (const outside of [
      '1999-12-31T23:59:59Z',
      '2101-01-01T00:00:00Z',
      '1970-01-01T00:00:01Z',
    ]) {
      expect(exportableSeconds(outside)).toBeUndefined();
    }
    expect(exportableSeconds('Tue 5')).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_SETTINGS,
  MAX_RETRY_AFTER_MS,
  backoffDelayMs,
  parseRetryAfter,
  resolveRetrySettings,
} from '../../src/trunk/retryPolicy.js';

const NOW = Date.parse('2025-11-21T12:00:00Z');

describe('parseRetryAfter', () => {
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('2', NOW)).toBe(2000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
    expect(parseRetryAfter(['3', '9'], NOW)).toBe(3000);
  });

  it('reads an HTTP-date relative to now, never negative', () => {
    expect(parseRetryAfter('Fri, 21 Nov 2025 12:00:05 GMT', NOW)).toBe(5000);
    expect(parseRetryAfter('Fri, 21 Nov 2025 11:59:00 GMT', NOW)).toBe(0);
  });

  it('ignores what it cannot read so that backoff applies', () => {
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
    expect(parseRetryAfter('', NOW)).toBeUndefined();
    expect(parseRetryAfter('soon', NOW)).toBeUndefined();
    expect(parseRetryAfter('-5', NOW)).toBeUndefined();
  });

  it('caps absurd values', () => {
    expect(parseRetryAfter('86400', NOW)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfter('Fri, 21 Nov 2030 12:00:00 GMT', NOW)).toBe(MAX_RETRY_AFTER_MS);
  });
});

describe('backoffDelayMs', () => {
  const settings = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 30_000 };

  it('draws uniformly below an exponentially growing ceiling', () => {
    expect(backoffDelayMs(1, settings, () => 0.5)).toBe(250);
    expect(backoffDelayMs(2, settings, () => 0.5)).toBe(500);
    expect(backoffDelayMs(3, settings, () => 0.5)).toBe(1000);
    expect(backoffDelayMs(3, settings, () => 0)).toBe(0);
  });

  it('never exceeds maxDelayMs', () => {
    expect(backoffDelayMs(20, settings, () => 0.999)).toBeLessThanOrEqual(30_000);
  });
});

describe('resolveRetrySettings', () => {
  it('fills in the defaults', () => {
    expect(resolveRetrySettings()).toEqual(DEFAULT_RETRY_SETTINGS);
    expect(resolveRetrySettings({ maxAttempts: 2 })).toEqual({
      ...DEFAULT_RETRY_SETTINGS,
      maxAttempts: 2,
    });
  });

  it('rejects settings that cannot work', () => {
    expect(() => resolveRetrySettings({ maxAttempts: 0 })).toThrow(RangeError);
    expect(() => resolveRetrySettings({ baseDelayMs: 10, maxDelayMs: 5 })).toThrow(RangeError);
  });
});

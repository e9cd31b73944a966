import { describe, expect, it } from 'vitest';
import { formatInterval, refreshedBy } from '../../src/metrics/help.js';

describe('HELP freshness text', () => {
  it.each([
    [30, '30s'],
    [60, '1m'],
    [90, '1m30s'],
    [300, '5m'],
    [3600, '1h'],
    [5400, '1h30m'],
    [86_400, '1d'],
    [0.5, '0.5s'],
  ])('formats %ss as %s', (seconds, expected) => {
    expect(formatInterval(seconds)).toBe(expected);
  });

  it('names the call of each API and its interval', () => {
    expect(refreshedBy({ v1: 'getQueue', v2: 'GET /v2/merge-queues' }, 30)).toBe(
      'Refreshed by polling getQueue (API v1) or GET /v2/merge-queues (API v2) every 30s.',
    );
    expect(refreshedBy({ v2: 'GET /v2/tests' }, 300)).toBe(
      'Refreshed by polling GET /v2/tests (API v2) every 5m.',
    );
  });
});

import { describe, expect, it } from 'vitest';
import { escapeHtml, formatAge, renderLandingPage } from '../../src/server/landingPage.js';
import type { TargetStatus } from '../../src/snapshot/types.js';

describe('formatAge', () => {
  it.each([
    [0, '0s ago'],
    [12.9, '12s ago'],
    [185, '3m 5s ago'],
    [7_800, '2h 10m ago'],
    [90_000, '1d 1h ago'],
    [-5, '0s ago'],
  ])('formats %ss as %s', (seconds, expected) => {
    expect(formatAge(seconds)).toBe(expected);
  });
});

describe('escapeHtml', () => {
  it('escapes the characters that can open markup or end an attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});

describe('renderLandingPage', () => {
  it('marks a failed target down and says when its data went stale', () => {
    const stale: TargetStatus = {
      target: { kind: 'merge_queue', repo: 'github.com/acme/widgets', branch: 'main' },
      up: false,
      lastAttemptAt: 1_000,
      lastSuccessAt: 100,
      lastDurationSeconds: 30,
      lastError: 'timeout after 30s',
      snapshot: undefined,
    };
    const page = renderLandingPage({
      version: '1.0.0',
      statuses: [stale],
      mergeQueueIntervalSeconds: 30,
      flakyTestsIntervalSeconds: 3600,
      now: 1_000,
    });
    expect(page).toContain(
      '<td><span class="down">down</span></td><td>15m 0s ago</td><td>dropped (stale)</td><td>timeout after 30s</td>',
    );
  });

  it('says so when no target is configured', () => {
    const page = renderLandingPage({
      version: '1.0.0',
      statuses: [],
      mergeQueueIntervalSeconds: 30,
      flakyTestsIntervalSeconds: 3600,
      now: 0,
    });
    expect(page).toContain('<p>No targets configured.</p>');
    expect(page).not.toContain('<table>');
  });
});

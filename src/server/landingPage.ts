import type { TargetStatus } from '../snapshot/types.js';
import { formatInterval } from '../metrics/help.js';

// Everything that reaches the page is escaped: repo names, branches and error messages come from
// configuration and from the API's error bodies, which we do not control.

export interface LandingPageData {
  readonly version: string;
  readonly statuses: readonly TargetStatus[];
  readonly mergeQueueIntervalSeconds: number;
  readonly flakyTestsIntervalSeconds: number;
  /** Unix seconds, for the "12s ago" column. */
  readonly now: number;
}

/** CSP for the page: nothing may load, only the inline stylesheet applies. */
export const LANDING_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const STYLE = `
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
.up { color: #1a7f37; } .down { color: #cf222e; } .pending { color: #777; }
code { font-size: 0.9em; }
`;

/** Renders the landing page: version, links and one row per configured target. */
export function renderLandingPage(data: LandingPageData): string {
  const rows = data.statuses.map((status) => renderRow(status, data.now));
  const table =
    rows.length === 0
      ? '<p>No targets configured.</p>'
      : [
          '<table>',
          '<thead><tr><th>Kind</th><th>Repository</th><th>Branch</th><th>Last poll</th>' +
            '<th>Last success</th><th>Data</th><th>Last error</th></tr></thead>',
          '<tbody>',
          ...rows,
          '</tbody>',
          '</table>',
        ].join('\n');
  const schedule =
    `Merge queues are polled every ${formatInterval(data.mergeQueueIntervalSeconds)}, ` +
    `quarantine lists every ${formatInterval(data.flakyTestsIntervalSeconds)}.`;
  // Relative links keep working behind a reverse proxy that serves the exporter under a prefix.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>trunk-exporter</title>
<style>${STYLE}</style>
</head>
<body>
<h1>trunk-exporter <small>${escapeHtml(data.version)}</small></h1>
<p>Prometheus exporter for Trunk merge queues and flaky-test quarantine.</p>
<p>${escapeHtml(schedule)}</p>
<ul>
<li><a href="./metrics">/metrics</a></li>
<li><a href="./healthz">/healthz</a></li>
<li><a href="./readyz">/readyz</a></li>
</ul>
<h2>Targets</h2>
${table}
</body>
</html>
`;
}

function renderRow(status: TargetStatus, now: number): string {
  const { target } = status;
  const poll = status.up === undefined ? 'pending' : status.up ? 'up' : 'down';
  const lastSuccess =
    status.lastSuccessAt === undefined ? 'never' : formatAge(now - status.lastSuccessAt);
  const data =
    status.snapshot !== undefined
      ? 'current'
      : status.lastSuccessAt !== undefined
        ? 'dropped (stale)'
        : 'none';
  const cells = [
    escapeHtml(target.kind),
    `<code>${escapeHtml(target.repo)}</code>`,
    target.branch === '' ? '' : `<code>${escapeHtml(target.branch)}</code>`,
    `<span class="${poll}">${poll}</span>`,
    escapeHtml(lastSuccess),
    escapeHtml(data),
    escapeHtml(status.lastError ?? ''),
  ];
  return `<tr>${cells.map((cell) => `<td>${cell}</td>`).join('')}</tr>`;
}

/** "12s ago", "3m 5s ago", "2h 10m ago", "4d 1h ago". */
export function formatAge(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  if (whole < 60) return `${whole}s ago`;
  if (whole < 3_600) return `${Math.floor(whole / 60)}m ${whole % 60}s ago`;
  if (whole < 86_400)
    return `${Math.floor(whole / 3_600)}h ${Math.floor((whole % 3_600) / 60)}m ago`;
  return `${Math.floor(whole / 86_400)}d ${Math.floor((whole % 86_400) / 3_600)}h ago`;
}

/** Escapes the five characters that matter in HTML text and attribute values. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

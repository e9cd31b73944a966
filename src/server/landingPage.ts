import { formatInterval } from '../metrics/help.js';
import type { FlakyTestsSnapshot, MergeQueueSnapshot, TargetStatus } from '../snapshot/types.js';
import { errorSummary, escapeHtml, formatAge, renderTime } from './landingPageText.js';

// Everything that reaches the page is escaped: repo names, branches, queue states and error
// messages come from configuration and from the API, which we do not control.

export interface LandingPageData {
  readonly version: string;
  readonly statuses: readonly TargetStatus[];
  readonly mergeQueueIntervalSeconds: number;
  readonly flakyTestsIntervalSeconds: number;
  /** Unix seconds, for the "12s ago" column. */
  readonly now: number;
  /** The upstream is the built-in simulator (`--demo`): the page says the data is not real. */
  readonly simulatedUpstream: boolean;
  /**
   * The reader passed the same basic auth as /metrics: poll errors show in full. Otherwise only
   * their HTTP status and request id, since an error body may echo what the API was sent.
   */
  readonly errorDetails: boolean;
  /** `webhooks.path` while webhooks are enabled: the page shows each target's last event. */
  readonly webhookPath?: string | undefined;
}

/** CSP for the page: nothing may load, only the inline stylesheet applies. */
export const LANDING_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Seconds between the page's own reloads (a meta refresh: no script, so the CSP stays as it is). */
export const LANDING_PAGE_REFRESH_SECONDS = 15;

const STYLE = `
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; background: #fff; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
td.number { text-align: right; }
time { color: #666; font-size: 0.85em; white-space: nowrap; }
.up { color: #1a7f37; } .down { color: #cf222e; } .pending { color: #777; }
.state { font-weight: bold; padding: 0.1em 0.5em; border-radius: 0.3em; color: #fff; }
.state-running { background: #1a7f37; } .state-paused { background: #cf222e; }
.state-draining, .state-switching_modes { background: #bf8700; } .state-other { background: #777; }
.banner { background: #fff8c5; border: 1px solid #d4a72c; padding: 0.6em 1em; }
code { font-size: 0.9em; }
`;

/** Queue states with a colour of their own; anything else the API sends is grey. */
const COLOURED_STATES = new Set(['running', 'paused', 'draining', 'switching_modes']);

/** Renders the landing page: version, links, and a table per kind of target with its live numbers. */
export function renderLandingPage(data: LandingPageData): string {
  const queues = data.statuses.filter((status) => status.target.kind === 'merge_queue');
  const lists = data.statuses.filter((status) => status.target.kind === 'flaky_tests');
  const sections =
    data.statuses.length === 0
      ? '<p>No targets configured.</p>'
      : [
          queues.length === 0 ? '' : renderMergeQueues(queues, data),
          lists.length === 0 ? '' : renderQuarantineLists(lists, data),
        ].join('\n');
  const schedule =
    `Merge queues are polled every ${formatInterval(data.mergeQueueIntervalSeconds)}, ` +
    `quarantine lists every ${formatInterval(data.flakyTestsIntervalSeconds)}.`;
  const webhooks = data.webhookPath === undefined ? '' : `<p>${renderWebhookLine(data)}</p>\n`;
  const banner = data.simulatedUpstream
    ? '<p class="banner"><strong>Demo:</strong> the upstream is the built-in Trunk API simulator ' +
      'with scripted incidents; no number on this page comes from Trunk.</p>\n'
    : '';
  // Relative links keep working behind a reverse proxy that serves the exporter under a prefix.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="refresh" content="${LANDING_PAGE_REFRESH_SECONDS}">
<title>trunk-exporter</title>
<style>${STYLE}</style>
</head>
<body>
<h1>trunk-exporter <small>${escapeHtml(data.version)}</small></h1>
${banner}<p>Prometheus exporter for Trunk merge queues and flaky-test quarantine.</p>
<p>${escapeHtml(schedule)} This page reloads every ${LANDING_PAGE_REFRESH_SECONDS}s.</p>
${webhooks}<ul>
<li><a href="./metrics">/metrics</a></li>
<li><a href="./healthz">/healthz</a></li>
<li><a href="./readyz">/readyz</a></li>
</ul>
${sections}
</body>
</html>
`;
}

function renderMergeQueues(statuses: readonly TargetStatus[], data: LandingPageData): string {
  const rows = statuses.map((status) => {
    const snapshot = status.snapshot?.kind === 'merge_queue' ? status.snapshot : undefined;
    return row([
      repoCell(status),
      `<code>${escapeHtml(status.target.branch)}</code>`,
      snapshot === undefined ? '' : renderQueueState(snapshot.state),
      numberCell(snapshot?.pullRequests.length),
      snapshot === undefined ? '' : renderOldestPullRequest(status, snapshot, data.now),
      numberCell(snapshot === undefined ? undefined : blockedCount(snapshot)),
      ...statusCells(status, data),
    ]);
  });
  return table(
    'Merge queues',
    [
      'Repository',
      'Branch',
      'State',
      'Pull requests',
      'Oldest pull request',
      'Blocked',
      ...statusHeadings(data),
    ],
    rows,
  );
}

/** The target's repository, marked when discovery found it rather than the configuration. */
function repoCell(status: TargetStatus): string {
  const discovered = status.target.discovered === true ? ' <small>(discovered)</small>' : '';
  return `<code>${escapeHtml(status.target.repo)}</code>${discovered}`;
}

function renderQuarantineLists(statuses: readonly TargetStatus[], data: LandingPageData): string {
  const rows = statuses.map((status) => {
    const snapshot: FlakyTestsSnapshot | undefined =
      status.snapshot?.kind === 'flaky_tests' ? status.snapshot : undefined;
    return row([
      repoCell(status),
      numberCell(snapshot?.quarantine?.count),
      ...statusCells(status, data),
    ]);
  });
  return table(
    'Quarantine lists',
    ['Repository', 'Quarantined tests', ...statusHeadings(data)],
    rows,
  );
}

function table(title: string, headings: readonly string[], rows: readonly string[]): string {
  return [
    `<h2>${escapeHtml(title)}</h2>`,
    '<table>',
    `<thead><tr>${headings.map((heading) => `<th>${escapeHtml(heading)}</th>`).join('')}</tr></thead>`,
    '<tbody>',
    ...rows,
    '</tbody>',
    '</table>',
  ].join('\n');
}

function row(cells: readonly string[]): string {
  return `<tr>${cells.map((cell) => (cell.startsWith('<td') ? cell : `<td>${cell}</td>`)).join('')}</tr>`;
}

function numberCell(value: number | undefined): string {
  return `<td class="number">${value === undefined ? '' : String(value)}</td>`;
}

/** The headings of statusCells(). */
function statusHeadings(data: LandingPageData): string[] {
  return ['Poll', 'Last success', 'Data', 'Last error', ...webhookHeadings(data)];
}

/** The columns every kind of target has: how its polls went, and its last webhook event. */
function statusCells(status: TargetStatus, data: LandingPageData): string[] {
  return [...pollCells(status, data), ...webhookCells(status, data)];
}

/** Poll outcome, last success (age and UTC), whether data is served, and the last error. */
function pollCells(status: TargetStatus, data: LandingPageData): string[] {
  const poll = status.up === undefined ? 'pending' : status.up ? 'up' : 'down';
  const served =
    status.snapshot !== undefined
      ? 'current'
      : status.lastSuccessAt !== undefined
        ? 'dropped (stale)'
        : 'none';
  const error =
    status.lastError === undefined
      ? ''
      : data.errorDetails
        ? status.lastError
        : errorSummary(status.lastError);
  return [
    `<span class="${poll}">${poll}</span>`,
    status.lastSuccessAt === undefined ? 'never' : renderTime(status.lastSuccessAt, data.now),
    escapeHtml(served),
    escapeHtml(error),
  ];
}

function renderQueueState(state: string): string {
  const colour = COLOURED_STATES.has(state) ? state : 'other';
  return `<span class="state state-${colour}">${escapeHtml(state)}</span>`;
}

/** Pull requests held back by a readiness rule; '' when readiness was not looked up. */
function blockedCount(snapshot: MergeQueueSnapshot): number | undefined {
  if (!snapshot.readinessKnown) return undefined;
  return snapshot.pullRequests.filter((pr) => pr.blockedReasons.length > 0).length;
}

/**
 * The pull request longest in the queue: by when the exporter's flow ledger first saw it enter,
 * else (no ledger yet) by its last state change, the only time the API reports.
 */
function renderOldestPullRequest(
  status: TargetStatus,
  snapshot: MergeQueueSnapshot,
  now: number,
): string {
  let oldest: { number: number; since: number } | undefined;
  for (const pr of snapshot.pullRequests) {
    const since = status.queueFlow?.tracked.get(pr.number)?.enteredAt ?? pr.stateChangedAt;
    if (since !== undefined && (oldest === undefined || since < oldest.since)) {
      oldest = { number: pr.number, since };
    }
  }
  if (oldest === undefined) return '';
  return `#${oldest.number} ${renderTime(oldest.since, now)}`;
}

function webhookHeadings(data: LandingPageData): string[] {
  return data.webhookPath === undefined ? [] : ['Last webhook event'];
}

/** The target's last accepted event (type, age and UTC time), while webhooks are enabled. */
function webhookCells(status: TargetStatus, data: LandingPageData): string[] {
  if (data.webhookPath === undefined) return [];
  const last = status.webhookCounts?.lastEvent;
  if (last === undefined) return ['none yet'];
  return [`<code>${escapeHtml(last.type)}</code><br>${renderTime(last.receivedAt, data.now)}`];
}

/** Where webhooks are received, and the last event of any target. */
function renderWebhookLine(data: LandingPageData): string {
  let last: { type: string; receivedAt: number; target: string } | undefined;
  for (const status of data.statuses) {
    const event = status.webhookCounts?.lastEvent;
    if (event === undefined || (last !== undefined && event.receivedAt <= last.receivedAt))
      continue;
    const { repo, branch } = status.target;
    last = { ...event, target: branch === '' ? repo : `${repo} ${branch}` };
  }
  const where = `Webhooks are received at POST <code>${escapeHtml(data.webhookPath ?? '')}</code>`;
  if (last === undefined) return `${where}; no event accepted yet.`;
  return (
    `${where}; last event <code>${escapeHtml(last.type)}</code> for ` +
    `<code>${escapeHtml(last.target)}</code>, ${escapeHtml(formatAge(data.now - last.receivedAt))}.`
  );
}

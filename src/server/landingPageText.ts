// Text of the landing page's cells: ages with their absolute UTC time, HTML escaping, and what of a
// poll error an unauthenticated reader may see.

/** "12s ago", "3m 5s ago", "2h 10m ago", "4d 1h ago". */
export function formatAge(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  if (whole < 60) return `${whole}s ago`;
  if (whole < 3_600) return `${Math.floor(whole / 60)}m ${whole % 60}s ago`;
  if (whole < 86_400)
    return `${Math.floor(whole / 3_600)}h ${Math.floor((whole % 3_600) / 60)}m ago`;
  return `${Math.floor(whole / 86_400)}d ${Math.floor((whole % 86_400) / 3_600)}h ago`;
}

/** `2026-01-01 00:00:12 UTC` for unix seconds; '' for a time no Date can hold. */
export function formatUtc(unixSeconds: number): string {
  const date = new Date(Math.floor(unixSeconds) * 1000);
  if (Number.isNaN(date.getTime())) return '';
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** An age and the absolute time it was measured from, as one HTML cell body (escaped). */
export function renderTime(at: number, now: number): string {
  const utc = formatUtc(at);
  if (utc === '') return '';
  const iso = new Date(Math.floor(at) * 1000).toISOString();
  return `${escapeHtml(formatAge(now - at))}<br><time datetime="${iso}">${escapeHtml(utc)}</time>`;
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

// A poll error is a TrunkApiError message: `Trunk API <endpoint> for <target> failed: <detail>
// (request id <id>, <n> attempts)`, whose detail may quote the API's error body. The status and the
// request id are what an operator needs to ask Trunk; the body excerpt may echo what the API was
// sent, so only a reader who passed the same basic auth as /metrics sees it.
const HTTP_STATUS = /^Trunk API \S+ for .*? failed: HTTP (\d{3})\b/;
// Anchored at the end: a body excerpt cannot forge the context the client appends last.
const REQUEST_ID = /\(request id ([^()]{1,128}), \d+ attempts?\)$/;

/** What of a poll error the landing page shows without authentication: status and request id. */
export function errorSummary(message: string): string {
  const status = HTTP_STATUS.exec(message)?.[1];
  const requestId = REQUEST_ID.exec(message)?.[1];
  const parts = [
    status === undefined ? 'poll failed' : `HTTP ${status}`,
    requestId === undefined ? undefined : `request id ${requestId}`,
  ].filter((part) => part !== undefined);
  return `${parts.join(', ')} (details in the exporter's log)`;
}

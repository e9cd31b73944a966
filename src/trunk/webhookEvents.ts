import { z } from 'zod';
import { repoRefSchema, type RepoRef } from './schemas.js';
import { WebhookFields, type WebhookAnomaly } from './webhookFields.js';

// The bodies of the webhooks Trunk sends through Svix (Svix event catalog of trunk.io; Trunk's
// "Merge Queue → Webhooks" and "Flaky Tests → Webhooks" pages and changelog examples). A signed
// event is read tolerantly: each field the exporter uses is read on its own, an unfit one counts as
// absent (and as an anomaly), and whatever else the event says is still counted. Older catalog
// examples of the merge-queue events have no `type` and no `timestamp`: the type is then
// `<family>.<action>`, and an event without a timestamp has no transition time (the receive time
// stands in where one is needed).

/** The six PR transitions the issue names; another `pull_request.*` type is kept as `other`. */
export const PULL_REQUEST_EVENT_TYPES = [
  'pull_request.submitted',
  'pull_request.queued',
  'pull_request.testing',
  'pull_request.merged',
  'pull_request.failed',
  'pull_request.canceled',
] as const;
export type PullRequestEventType = (typeof PULL_REQUEST_EVENT_TYPES)[number];

/** Batch events in the catalog and docs; another `pull_request_batch.*` type is kept as `other`. */
export const PULL_REQUEST_BATCH_EVENT_TYPES = [
  'pull_request_batch.queued',
  'pull_request_batch.testing',
  'pull_request_batch.pending_failure',
  'pull_request_batch.merged',
  'pull_request_batch.failed',
  'pull_request_batch.canceled',
] as const;

export const FLAKY_TEST_EVENT_TYPES = [
  'v2.test_case.status_changed',
  'test_case.status_changed',
  'test_case.monitor_status_changed',
  'test_case.quarantining_setting_changed',
  'test_case.investigation_completed',
] as const;
export type FlakyTestEventType = (typeof FLAKY_TEST_EVENT_TYPES)[number];

/** Every merge-queue event type with its own `event` label value; the rest are `other`. */
export const KNOWN_MERGE_QUEUE_EVENT_TYPES: readonly string[] = [
  ...PULL_REQUEST_EVENT_TYPES,
  ...PULL_REQUEST_BATCH_EVENT_TYPES,
];

/** The `event` label value of a merge-queue event type: itself when known, else `other`. */
export function mergeQueueEventLabel(type: string): string {
  return KNOWN_MERGE_QUEUE_EVENT_TYPES.includes(type) ? type : 'other';
}

// An event type is a short dotted identifier; anything else cannot be one (and is never a label).
const EVENT_TYPE = /^[a-z0-9_]+(\.[a-z0-9_]+){1,3}$/;
const MAX_EVENT_TYPE_LENGTH = 100;
/** Longest free-text value (reason, status, setting) taken from an event; labels are built of them. */
export const MAX_EVENT_VALUE_LENGTH = 200;

interface EventBase {
  /** The event type, e.g. `pull_request.merged`. */
  readonly type: string;
  /** Unix seconds of the transition, from the event's own timestamp, when it has one (2000-2100). */
  readonly transitionSeconds: number | undefined;
}

/** A PR moving through a merge queue (`pull_request.*`). */
export interface PullRequestEvent extends EventBase {
  readonly kind: 'pull_request';
  readonly repo: RepoRef;
  /** `host/owner/name`, as the `repo` label and target names write it. */
  readonly repoName: string;
  readonly branch: string;
  /** Undefined when the event has no usable `pr_number`: its exit is then left to the polls. */
  readonly prNumber: number | undefined;
  /** `failure_reason` of a failed PR, raw. */
  readonly failureReason: string | undefined;
  readonly batched: boolean | undefined;
}

/** A batch of PRs tested together (`pull_request_batch.*`). */
export interface PullRequestBatchEvent extends EventBase {
  readonly kind: 'pull_request_batch';
  readonly repo: RepoRef;
  readonly repoName: string;
  readonly branch: string;
  readonly prNumbers: readonly number[];
}

interface FlakyTestEventBase extends EventBase {
  readonly kind: 'flaky_tests';
  /** `host/owner/name` from `repository.html_url`. */
  readonly repoName: string;
}

/** A test's status changed; v1 (`test_case.status_changed`) and v2 say the same thing. */
export interface TestStatusChangedEvent extends FlakyTestEventBase {
  readonly type: 'v2.test_case.status_changed' | 'test_case.status_changed';
  readonly previousStatus: string | undefined;
  readonly newStatus: string | undefined;
}

export interface MonitorStatusChangedEvent extends FlakyTestEventBase {
  readonly type: 'test_case.monitor_status_changed';
  readonly monitorType: string | undefined;
  readonly monitorStatus: string | undefined;
}

export interface QuarantiningSettingChangedEvent extends FlakyTestEventBase {
  readonly type: 'test_case.quarantining_setting_changed';
  readonly previousSetting: string | undefined;
  readonly newSetting: string | undefined;
}

/** Trunk's AI finished investigating a flaky test. */
export interface InvestigationCompletedEvent extends FlakyTestEventBase {
  readonly type: 'test_case.investigation_completed';
}

export type FlakyTestEvent =
  | TestStatusChangedEvent
  | MonitorStatusChangedEvent
  | QuarantiningSettingChangedEvent
  | InvestigationCompletedEvent;

export type MergeQueueEvent = PullRequestEvent | PullRequestBatchEvent;

export type WebhookEvent = PullRequestEvent | PullRequestBatchEvent | FlakyTestEvent;

/**
 * A parsed event with the anomalies met on the way; or, when there is none to count, whether the
 * type is one the exporter knows (then the body named no usable target) and a problem saying why.
 */
export type ParsedWebhookEvent =
  | {
      readonly ok: true;
      readonly event: WebhookEvent;
      readonly anomalies: readonly WebhookAnomaly[];
    }
  | {
      readonly ok: false;
      /** False: a type the exporter does not interpret (or none at all). */
      readonly recognized: boolean;
      /** The event type when the body has a well-formed one. */
      readonly type: string | undefined;
      readonly problem: string;
      readonly anomalies: readonly WebhookAnomaly[];
    };

/** `host/owner/name` of a repository reference. */
export function repoRefName(repo: RepoRef): string {
  return `${repo.host}/${repo.owner}/${repo.name}`;
}

/**
 * `host/owner/name` of a repository's web address (`https://github.com/o/n` → `github.com/o/n`), or
 * undefined when the address is not http(s) with exactly an owner and a name. The host (with a
 * port, if any) is lower-cased; a trailing slash or `.git` is dropped.
 */
export function repoNameFromHtmlUrl(htmlUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(htmlUrl);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  const parts = url.pathname
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .split('/')
    .slice(1);
  if (parts.length !== 2 || parts.some((part) => part === '')) return undefined;
  let owner: string;
  let name: string;
  try {
    [owner, name] = parts.map((part) => decodeURIComponent(part)) as [string, string];
  } catch {
    return undefined; // a malformed %-escape
  }
  if (/[\s/]/.test(owner) || /[\s/]/.test(name)) return undefined;
  return `${url.host.toLowerCase()}/${owner}/${name}`;
}

const eventValue = z.string().max(MAX_EVENT_VALUE_LENGTH);
const prNumber = z.number().int().positive();
const branchName = z.string().max(1_000);
const htmlUrl = z
  .string()
  .max(2_000)
  .transform((url, context) => {
    const name = repoNameFromHtmlUrl(url);
    if (name === undefined) {
      context.addIssue({ code: 'custom', message: 'expected https://host/owner/name' });
      return z.NEVER;
    }
    return name;
  });

/** The event type of a body: `type`, or for older merge-queue payloads `<family>.<action>`. */
function eventTypeOf(body: Readonly<Record<string, unknown>>): string | undefined {
  const { type, action } = body;
  const candidate =
    typeof type === 'string'
      ? type
      : typeof action !== 'string'
        ? undefined
        : body.pr_number !== undefined
          ? `pull_request.${action}`
          : body.pr_numbers !== undefined
            ? `pull_request_batch.${action}`
            : undefined;
  return candidate !== undefined &&
    candidate.length <= MAX_EVENT_TYPE_LENGTH &&
    EVENT_TYPE.test(candidate)
    ? candidate
    : undefined;
}

function isFlakyTestType(type: string): type is FlakyTestEventType {
  return (FLAKY_TEST_EVENT_TYPES as readonly string[]).includes(type);
}

/**
 * Reads a webhook body (already JSON-decoded) as one of the events the exporter counts. Never
 * refuses a known type for its fields: an unfit field is treated as absent and listed as an
 * anomaly; only a body naming no usable target (repository, and branch for a merge queue) leaves
 * nothing to count.
 */
export function parseWebhookEvent(json: unknown): ParsedWebhookEvent {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return unrecognized(undefined, 'body: expected a JSON object');
  }
  const body = json as Readonly<Record<string, unknown>>;
  const type = eventTypeOf(body);
  if (type === undefined) return unrecognized(undefined, 'type: missing or not an event type');
  const fields = new WebhookFields(body);
  let event: WebhookEvent | undefined;
  if (type.startsWith('pull_request.') || type.startsWith('pull_request_batch.')) {
    event = mergeQueueEvent(type, fields);
  } else if (isFlakyTestType(type)) {
    event = flakyTestEvent(type, fields);
  } else {
    return unrecognized(type, `type: ${JSON.stringify(type)} is not interpreted`);
  }
  const { anomalies } = fields;
  if (event !== undefined) return { ok: true, event, anomalies };
  const fieldNames = anomalies.map((anomaly) => anomaly.field).join(', ');
  return { ok: false, recognized: true, type, problem: `no usable ${fieldNames}`, anomalies };
}

function unrecognized(type: string | undefined, problem: string): ParsedWebhookEvent {
  return { ok: false, recognized: false, type, problem, anomalies: [] };
}

function mergeQueueEvent(type: string, fields: WebhookFields): MergeQueueEvent | undefined {
  const repo = fields.read(['repository'], repoRefSchema, true);
  const branch = fields.read(['target_branch'], branchName, true);
  const transitionSeconds = fields.time([['timestamp']]);
  if (type.startsWith('pull_request_batch.')) {
    const prNumbers = fields.read(['pr_numbers'], z.array(prNumber).max(10_000)) ?? [];
    if (repo === undefined || branch === undefined) return undefined;
    const repoName = repoRefName(repo);
    return {
      kind: 'pull_request_batch',
      type,
      repo,
      repoName,
      branch,
      prNumbers,
      transitionSeconds,
    };
  }
  const event = {
    kind: 'pull_request' as const,
    type,
    prNumber: fields.read(['pr_number'], prNumber, true),
    failureReason: fields.read(['failure_reason'], eventValue),
    batched: fields.read(['batched'], z.boolean()),
    transitionSeconds,
  };
  if (repo === undefined || branch === undefined) return undefined;
  return { ...event, repo, repoName: repoRefName(repo), branch };
}

function flakyTestEvent(
  type: FlakyTestEventType,
  fields: WebhookFields,
): FlakyTestEvent | undefined {
  // Top level in most events; inside `test_case` in the changelog's quarantining example and v1.
  const repoName = fields.readFirst(
    [
      ['repository', 'html_url'],
      ['test_case', 'repository', 'html_url'],
    ],
    htmlUrl,
    true,
  );
  if (repoName === undefined) return undefined;
  const base = { kind: 'flaky_tests' as const, repoName };
  switch (type) {
    case 'v2.test_case.status_changed':
      return {
        ...base,
        type,
        previousStatus: fields.read(['previous_status'], eventValue),
        newStatus: fields.read(['new_status'], eventValue, true),
        transitionSeconds: fields.time([['timestamp']]),
      };
    case 'test_case.status_changed':
      return {
        ...base,
        type,
        previousStatus: fields.read(['status_change', 'previous_status'], eventValue),
        newStatus: fields.read(['status_change', 'current_status', 'value'], eventValue, true),
        transitionSeconds: fields.time([
          ['status_change', 'current_status', 'timestamp'],
          ['timestamp'],
        ]),
      };
    case 'test_case.monitor_status_changed':
      return {
        ...base,
        type,
        monitorType: fields.read(['monitor', 'type'], eventValue, true),
        monitorStatus: fields.read(['monitor', 'status'], eventValue, true),
        transitionSeconds: fields.time([['timestamp']]),
      };
    case 'test_case.quarantining_setting_changed':
      return {
        ...base,
        type,
        previousSetting: fields.read(
          ['quarantine_setting_changed', 'previous_quarantining_setting'],
          eventValue,
        ),
        newSetting: fields.read(
          ['quarantine_setting_changed', 'updated_quarantining_setting'],
          eventValue,
          true,
        ),
        transitionSeconds: fields.time([
          ['timestamp'],
          ['quarantine_setting_changed', 'timestamp'],
        ]),
      };
    case 'test_case.investigation_completed':
      return { ...base, type, transitionSeconds: fields.time([['created_at'], ['timestamp']]) };
  }
}

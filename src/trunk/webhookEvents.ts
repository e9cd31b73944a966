import { z } from 'zod';
import { repoRefSchema, type RepoRef } from './schemas.js';
import { exportableSeconds, rfc3339DateTimeSchema } from './timestamps.js';

// The bodies of the webhooks Trunk sends through Svix (Svix event catalog of trunk.io; Trunk's
// "Merge Queue → Webhooks" and "Flaky Tests → Webhooks" pages and changelog examples). Objects
// tolerate (and drop) fields not listed here, since Trunk adds fields to these schemas over time;
// the fields the exporter uses are checked strictly. Older catalog examples of the merge-queue
// events have no `type` and no `timestamp`: the type is then `<family>.<action>`, and an event
// without a timestamp has no transition time (the receive time stands in where one is needed).

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
  'test_case.monitor_status_changed',
  'test_case.quarantining_setting_changed',
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

const eventValue = z.string().min(1).max(MAX_EVENT_VALUE_LENGTH);
const transitionTime = rfc3339DateTimeSchema.optional();

const pullRequestBodySchema = z.object({
  pr_number: z.number().int().positive(),
  repository: repoRefSchema,
  target_branch: z.string().min(1),
  failure_reason: eventValue.nullish(),
  batched: z.boolean().optional(),
  timestamp: transitionTime,
});

const pullRequestBatchBodySchema = z.object({
  pr_numbers: z.array(z.number().int().positive()).max(10_000),
  repository: repoRefSchema,
  target_branch: z.string().min(1),
  timestamp: transitionTime,
});

const htmlUrlHolder = z.object({ html_url: z.string().max(2_000) });

/** The repository of a flaky-test event: top level in two events, inside `test_case` in the third. */
const flakyRepositoryFields = {
  repository: htmlUrlHolder.optional(),
  test_case: z.object({ repository: htmlUrlHolder.optional() }).optional(),
  timestamp: transitionTime,
};

const flakyRepositoryBodySchema = z.object(flakyRepositoryFields);

const statusChangedBodySchema = flakyRepositoryBodySchema.extend({
  previous_status: eventValue,
  new_status: eventValue,
});

const monitorStatusChangedBodySchema = flakyRepositoryBodySchema.extend({
  monitor: z.object({ type: eventValue, status: eventValue }),
});

const quarantiningSettingChangedBodySchema = flakyRepositoryBodySchema.extend({
  quarantine_setting_changed: z.object({
    previous_quarantining_setting: eventValue.nullish(),
    updated_quarantining_setting: eventValue,
    timestamp: transitionTime,
  }),
});

/** Fields every event carries (or, for older merge-queue payloads, `action` instead of `type`). */
const envelopeSchema = z.object({
  type: z.string().max(MAX_EVENT_TYPE_LENGTH).optional(),
  action: z.string().max(MAX_EVENT_TYPE_LENGTH).optional(),
  pr_number: z.unknown().optional(),
  pr_numbers: z.unknown().optional(),
});

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
  readonly prNumber: number;
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

export interface TestStatusChangedEvent extends FlakyTestEventBase {
  readonly type: 'v2.test_case.status_changed';
  readonly previousStatus: string;
  readonly newStatus: string;
}

export interface MonitorStatusChangedEvent extends FlakyTestEventBase {
  readonly type: 'test_case.monitor_status_changed';
  readonly monitorType: string;
  readonly monitorStatus: string;
}

export interface QuarantiningSettingChangedEvent extends FlakyTestEventBase {
  readonly type: 'test_case.quarantining_setting_changed';
  readonly previousSetting: string | undefined;
  readonly newSetting: string;
}

export type FlakyTestEvent =
  TestStatusChangedEvent | MonitorStatusChangedEvent | QuarantiningSettingChangedEvent;

export type MergeQueueEvent = PullRequestEvent | PullRequestBatchEvent;

export type WebhookEvent = PullRequestEvent | PullRequestBatchEvent | FlakyTestEvent;

/** A parsed event, or a problem naming the field that is wrong. */
export type ParsedWebhookEvent =
  | { readonly ok: true; readonly event: WebhookEvent }
  | { readonly ok: false; readonly problem: string };

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

/** Unix seconds of an event's RFC 3339 timestamp within 2000-2100, else undefined. */
export function transitionSecondsOf(timestamp: string | null | undefined): number | undefined {
  return exportableSeconds(timestamp);
}

function problemOf(error: z.ZodError, prefix = ''): string {
  const issue = error.issues[0];
  if (issue === undefined) return 'invalid event';
  const path = [prefix, ...issue.path.map(String)].filter((part) => part !== '').join('.');
  return `${path === '' ? 'body' : path}: ${issue.message}`;
}

function eventType(envelope: z.infer<typeof envelopeSchema>): string | undefined {
  if (envelope.type !== undefined) return envelope.type;
  if (envelope.action === undefined) return undefined;
  if (envelope.pr_number !== undefined) return `pull_request.${envelope.action}`;
  if (envelope.pr_numbers !== undefined) return `pull_request_batch.${envelope.action}`;
  return undefined;
}

function flakyRepoName(
  body: z.infer<typeof flakyRepositoryBodySchema>,
): string | { problem: string } {
  const field =
    body.repository !== undefined ? 'repository.html_url' : 'test_case.repository.html_url';
  const htmlUrl = body.repository?.html_url ?? body.test_case?.repository?.html_url;
  if (htmlUrl === undefined) return { problem: 'repository.html_url: required' };
  const name = repoNameFromHtmlUrl(htmlUrl);
  return name ?? { problem: `${field}: expected https://host/owner/name` };
}

/** Parses a webhook body (already JSON-decoded) into one of the events the exporter uses. */
export function parseWebhookEvent(json: unknown): ParsedWebhookEvent {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return { ok: false, problem: 'body: expected a JSON object' };
  }
  const envelope = envelopeSchema.safeParse(json);
  if (!envelope.success) return { ok: false, problem: problemOf(envelope.error) };
  const type = eventType(envelope.data);
  if (type === undefined) return { ok: false, problem: 'type: required' };
  if (!EVENT_TYPE.test(type)) return { ok: false, problem: 'type: not an event type' };

  if (type.startsWith('pull_request.')) {
    const body = pullRequestBodySchema.safeParse(json);
    if (!body.success) return { ok: false, problem: problemOf(body.error) };
    const { data } = body;
    return {
      ok: true,
      event: {
        kind: 'pull_request',
        type,
        repo: data.repository,
        repoName: repoRefName(data.repository),
        branch: data.target_branch,
        prNumber: data.pr_number,
        failureReason: data.failure_reason ?? undefined,
        batched: data.batched,
        transitionSeconds: transitionSecondsOf(data.timestamp),
      },
    };
  }
  if (type.startsWith('pull_request_batch.')) {
    const body = pullRequestBatchBodySchema.safeParse(json);
    if (!body.success) return { ok: false, problem: problemOf(body.error) };
    const { data } = body;
    return {
      ok: true,
      event: {
        kind: 'pull_request_batch',
        type,
        repo: data.repository,
        repoName: repoRefName(data.repository),
        branch: data.target_branch,
        prNumbers: data.pr_numbers,
        transitionSeconds: transitionSecondsOf(data.timestamp),
      },
    };
  }
  switch (type) {
    case 'v2.test_case.status_changed': {
      const body = statusChangedBodySchema.safeParse(json);
      if (!body.success) return { ok: false, problem: problemOf(body.error) };
      const repoName = flakyRepoName(body.data);
      if (typeof repoName !== 'string') return { ok: false, problem: repoName.problem };
      return {
        ok: true,
        event: {
          kind: 'flaky_tests',
          type: 'v2.test_case.status_changed',
          repoName,
          previousStatus: body.data.previous_status,
          newStatus: body.data.new_status,
          transitionSeconds: transitionSecondsOf(body.data.timestamp),
        },
      };
    }
    case 'test_case.monitor_status_changed': {
      const body = monitorStatusChangedBodySchema.safeParse(json);
      if (!body.success) return { ok: false, problem: problemOf(body.error) };
      const repoName = flakyRepoName(body.data);
      if (typeof repoName !== 'string') return { ok: false, problem: repoName.problem };
      return {
        ok: true,
        event: {
          kind: 'flaky_tests',
          type: 'test_case.monitor_status_changed',
          repoName,
          monitorType: body.data.monitor.type,
          monitorStatus: body.data.monitor.status,
          transitionSeconds: transitionSecondsOf(body.data.timestamp),
        },
      };
    }
    case 'test_case.quarantining_setting_changed': {
      const body = quarantiningSettingChangedBodySchema.safeParse(json);
      if (!body.success) return { ok: false, problem: problemOf(body.error) };
      const repoName = flakyRepoName(body.data);
      if (typeof repoName !== 'string') return { ok: false, problem: repoName.problem };
      const change = body.data.quarantine_setting_changed;
      return {
        ok: true,
        event: {
          kind: 'flaky_tests',
          type: 'test_case.quarantining_setting_changed',
          repoName,
          previousSetting: change.previous_quarantining_setting ?? undefined,
          newSetting: change.updated_quarantining_setting,
          transitionSeconds: transitionSecondsOf(body.data.timestamp ?? change.timestamp),
        },
      };
    }
    default:
      return { ok: false, problem: `type: unknown event type ${JSON.stringify(type)}` };
  }
}

import type { ExporterConfig } from '../config/types.js';
import type { Logger } from '../log/logger.js';
import type { SnapshotStore } from '../snapshot/store.js';
import type { Target } from '../snapshot/types.js';
import { parseJson } from '../trunk/jsonText.js';
import {
  parseWebhookEvent,
  type FlakyTestEvent,
  type MergeQueueEvent,
  type WebhookEvent,
} from '../trunk/webhookEvents.js';
import type { WebhookAnomalyKind } from '../trunk/webhookFields.js';
import { nestsDeeperThan, MAX_JSON_DEPTH } from './jsonDepth.js';
import { foldWebhookEvent, happenedBeforeCounting } from './webhookCounting.js';
import type { WebhookObserver, WebhookResult } from './observer.js';
import { ReplayGuard } from './replayGuard.js';
import { SignatureVerifier, svixHeadersOf, type SvixHeaders } from './signature.js';

/** Largest body read; a longer one is answered 413 without reading the rest. */
export const MAX_WEBHOOK_BODY_BYTES = 1024 * 1024;

/** What to answer: the HTTP status and a short text (none for 204). */
export interface WebhookAnswer {
  readonly status: 204 | 400 | 401 | 405 | 408 | 413 | 415 | 503;
  readonly result: WebhookResult;
  readonly message: string;
}

export type WebhookSettings = ExporterConfig['webhooks'];

interface ReceiverOptions {
  readonly store: SnapshotStore;
  readonly observer: WebhookObserver;
  readonly logger: Logger;
  /** An accepted event about a configured merge queue; after its webhook counts took it. */
  readonly onMergeQueueEvent: (target: Target, event: MergeQueueEvent, receivedAt: number) => void;
  /** An accepted event about a configured repository's flaky tests; after its webhook counts took it. */
  readonly onFlakyTestEvent: (target: Target, event: FlakyTestEvent, receivedAt: number) => void;
  /** Unix seconds. */
  readonly now?: () => number;
}

/**
 * Trunk's webhooks, from the request's headers to the store: checks the signature headers before
 * any body is read, verifies the signature over the body, answers a redelivery without counting it
 * again, parses the event and folds it into its target's webhook counts. Once the signature
 * checks out the answer is 204 whatever the event says, unless the body is not JSON (400): Svix
 * would retry any other answer for a day. It never waits on anything: what an event sets off (a
 * poll) is handed on and runs after the answer.
 */
export class WebhookReceiver {
  readonly #options: ReceiverOptions;
  readonly #now: () => number;
  /** When the exporter started: events about a queue not yet polled count from here. */
  readonly #startedAt: number;
  #settings: WebhookSettings | undefined;
  #verifier: SignatureVerifier | undefined;
  readonly #replays = new ReplayGuard();
  /** The pull request transitions accepted lately, by sameTransitionKey. */
  readonly #transitions = new ReplayGuard();
  /** Configured targets by lower-cased repository (GitHub's names ignore case) and branch. */
  #targets = new Map<string, Target>();

  constructor(options: ReceiverOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => Date.now() / 1000);
    this.#startedAt = this.#now();
  }

  /** Applies the running configuration's `webhooks` and targets (start-up and every reload). */
  configure(settings: WebhookSettings, targets: readonly Target[]): void {
    if (settings.signingSecret?.reveal() !== this.#settings?.signingSecret?.reveal()) {
      this.#verifier =
        settings.signingSecret === undefined
          ? undefined
          : new SignatureVerifier(settings.signingSecret);
    }
    this.#settings = settings;
    this.#targets = new Map(targets.map((target) => [lookupKey(target), target]));
  }

  /** The path to answer at, or undefined while webhooks are off. */
  get path(): string | undefined {
    return this.#settings?.enabled === true && this.#verifier !== undefined
      ? this.#settings.path
      : undefined;
  }

  /** How long a request may take to send its body, in milliseconds. */
  get bodyTimeoutMs(): number {
    return (this.#settings?.bodyTimeoutSeconds ?? 0) * 1000;
  }

  /**
   * The signature headers when they can belong to a signed message within the tolerance;
   * otherwise the 401 (`unsigned`) to answer before reading the body.
   */
  checkHeaders(
    header: (name: string) => readonly string[] | undefined,
  ): { readonly headers: SvixHeaders } | { readonly answer: WebhookAnswer } {
    const checked = svixHeadersOf(header, this.#now(), this.#settings?.toleranceSeconds ?? 0);
    if ('problem' in checked) return { answer: this.#answer(401, 'unsigned') };
    return checked;
  }

  /** The 503 for a request that found no body slot, or whose slot went to a faster one. */
  busy(): WebhookAnswer {
    return this.#answer(503, 'busy', 'too many webhook bodies being read; retry later');
  }

  /** The 408 for a body that did not arrive within the deadline. */
  timedOut(): WebhookAnswer {
    return this.#answer(408, 'timeout', 'body not received in time');
  }

  /** The 405 for a request with another method than POST. */
  methodNotAllowed(): WebhookAnswer {
    return this.#answer(405, 'method_not_allowed', 'method not allowed: use POST');
  }

  /** The 413 for a body over MAX_WEBHOOK_BODY_BYTES (announced or read). */
  tooLarge(): WebhookAnswer {
    return this.#answer(
      413,
      'too_large',
      `body larger than ${MAX_WEBHOOK_BODY_BYTES / 1024 / 1024} MiB`,
    );
  }

  /** The 415 for a Content-Encoding the endpoint does not decode; nothing of the body is read. */
  unsupportedEncoding(): WebhookAnswer {
    return this.#answer(415, 'malformed', 'unsupported Content-Encoding: use gzip, deflate or br');
  }

  /** The 400 for a body that does not decode by its Content-Encoding: nothing to verify. */
  undecodable(detail: string): WebhookAnswer {
    return this.#answer(400, 'malformed', detail);
  }

  /** Verifies, deduplicates, parses and records one request's body. */
  receive(headers: SvixHeaders, body: Buffer): WebhookAnswer {
    const now = this.#now();
    const { observer } = this.#options;
    const verdict = this.#verifier?.verify(body, headers) ?? 'invalid';
    // A genuine message whose body came in as its timestamp aged past the window is no forgery:
    // counted as the header check counts a timestamp outside the tolerance.
    if (verdict === 'stale') return this.#answer(401, 'unsigned');
    if (verdict !== 'valid') return this.#answer(401, 'invalid_signature');
    if (this.#replays.has(headers.id, now)) return this.#answer(204, 'duplicate');
    if (nestsDeeperThan(body)) {
      return this.#answer(400, 'malformed', `body nested deeper than ${MAX_JSON_DEPTH}`);
    }
    let json: unknown;
    try {
      json = parseJson(body.toString('utf8'));
    } catch {
      return this.#answer(400, 'malformed', 'body is not JSON');
    }
    // Remembered only once answered 2xx: a body refused as malformed is refused again when Svix
    // retries it, not taken for a duplicate.
    this.#replays.remember(headers.id, now);
    const parsed = parseWebhookEvent(json);
    const kinds = new Map<WebhookAnomalyKind, number>();
    for (const { kind } of parsed.anomalies) kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    for (const [kind, count] of kinds) observer.anomaly(kind, count);
    if (!parsed.ok) {
      if (parsed.recognized) return this.#answer(204, 'ignored');
      observer.unrecognizedEvent(parsed.type);
      return this.#answer(204, 'unrecognized');
    }
    const target = this.#targets.get(eventLookupKey(parsed.event));
    if (target === undefined) return this.#answer(204, 'ignored');
    const event = parsed.event;
    const transition = sameTransitionKey(event);
    if (transition !== undefined) {
      if (this.#transitions.has(transition, now)) return this.#answer(204, 'duplicate');
      this.#transitions.remember(transition, now);
    }
    // The queue's other witness of failures, as it is now: what it counted, and its reasons' share
    // of the cap.
    const flow = this.#options.store.queueFlow(target);
    // A redelivered event from before the queue was watched counts only as an event received.
    const beforeCounting =
      event.kind !== 'flaky_tests' &&
      happenedBeforeCounting(event, flow?.startedAt ?? this.#startedAt);
    this.#options.store.updateWebhookCounts(target, (previous) =>
      foldWebhookEvent(previous, event, now, flow?.entryHistory, beforeCounting),
    );
    this.#options.logger.debug(
      { event: event.type, repo: target.repo, branch: target.branch || undefined },
      'webhook event accepted',
    );
    if (event.kind !== 'flaky_tests') {
      if (!beforeCounting) this.#options.onMergeQueueEvent(target, event, now);
    } else this.#options.onFlakyTestEvent(target, event, now);
    return this.#answer(204, 'accepted');
  }

  #answer(status: WebhookAnswer['status'], result: WebhookResult, detail?: string): WebhookAnswer {
    this.#options.observer.requestHandled(result);
    const message =
      status === 204
        ? ''
        : result === 'unsigned'
          ? 'missing or malformed signature headers (svix-* or webhook-*), or a timestamp outside the tolerance'
          : result === 'invalid_signature'
            ? 'no signature matches the signing secret'
            : (detail ?? result);
    return { status, result, message };
  }
}

/**
 * What tells one pull request transition from another: its type, queue, pull request and the
 * instant Trunk stamped it with. The same transition sent again under a new message id is a
 * duplicate; an event without a pull request or a timestamp cannot be told apart and always counts.
 */
function sameTransitionKey(event: WebhookEvent): string | undefined {
  if (event.kind !== 'pull_request') return undefined;
  if (event.prNumber === undefined || event.transitionSeconds === undefined) return undefined;
  return [eventLookupKey(event), event.type, event.prNumber, event.transitionSeconds].join(
    '\u0000',
  );
}

function lookupKey(target: Target): string {
  return `${target.kind}\u0000${target.repo.toLowerCase()}\u0000${target.branch}`;
}

function eventLookupKey(event: WebhookEvent): string {
  return event.kind === 'flaky_tests'
    ? lookupKey({ kind: 'flaky_tests', repo: event.repoName, branch: '' })
    : lookupKey({ kind: 'merge_queue', repo: event.repoName, branch: event.branch });
}

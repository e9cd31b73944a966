// The simulator's webhooks: what the world does, POSTed to one URL and signed as Svix signs Trunk's
// (svix's own Webhook#sign, at send time, with svix-id, svix-timestamp and svix-signature). The
// queue is bounded and sending never blocks the world or the simulated API: when the receiver is
// slow or down, webhooks past the bound are dropped and counted. There are no retries.
import { randomUUID } from 'node:crypto';
import { Webhook } from 'svix';
import { silentLogger, type Logger } from '../log/logger.js';
import { webhookPayloads, type WebhookPayload } from './webhookPayloads.js';
import type { SimulatorWorld } from './world.js';

export interface WebhookSenderOptions {
  /** Where to POST, e.g. `http://127.0.0.1:9740/webhooks/trunk`. */
  readonly url: string;
  /** The Svix signing secret, `whsec_` and base64. */
  readonly secret: string;
  readonly logger?: Logger | undefined;
  /** Webhooks waiting at most; defaults to 1000. */
  readonly maxQueued?: number | undefined;
  /** Requests in flight at most; defaults to 4. */
  readonly concurrency?: number | undefined;
  /** Per request; defaults to 5000. */
  readonly timeoutMs?: number | undefined;
}

/** What became of the webhooks so far. */
export interface WebhookSenderStatistics {
  /** Answered with a 2xx. */
  readonly sent: number;
  /** Answered otherwise, or not at all (refused, timed out). */
  readonly failed: number;
  /** Never sent: the queue was full. */
  readonly dropped: number;
  /** Waiting or in flight now. */
  readonly queued: number;
}

export interface WebhookSender {
  /** Queues one webhook and returns at once; false when it was dropped. */
  send(payload: WebhookPayload): boolean;
  statistics(): WebhookSenderStatistics;
  /** Resolves once nothing is waiting or in flight. */
  idle(): Promise<void>;
  /** Stops: drops what waits and aborts what is in flight. */
  close(): Promise<void>;
}

/** At most one warning per this many milliseconds about failed or dropped webhooks. */
const WARNING_INTERVAL_MS = 10_000;

/** A sender for `options.url`; throws at once when the secret is not a Svix signing secret. */
export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const signer = new Webhook(options.secret);
  const logger = options.logger ?? silentLogger();
  const maxQueued = options.maxQueued ?? 1000;
  const concurrency = options.concurrency ?? 4;
  const timeoutMs = options.timeoutMs ?? 5000;
  const waiting: WebhookPayload[] = [];
  const stopped = new AbortController();
  let inFlight = 0;
  let sent = 0;
  let failed = 0;
  let dropped = 0;
  let lastWarningAt = Number.NEGATIVE_INFINITY;
  let idleWaiters: (() => void)[] = [];

  const warn = (why: string): void => {
    const now = Date.now();
    if (now - lastWarningAt < WARNING_INTERVAL_MS) return;
    lastWarningAt = now;
    logger.warn({ url: options.url, sent, failed, dropped }, `webhooks: ${why}`);
  };

  const post = async (payload: WebhookPayload): Promise<void> => {
    const id = `msg_${randomUUID()}`;
    const at = new Date();
    const body = JSON.stringify(payload.body);
    try {
      const response = await fetch(options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'svix-id': id,
          'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
          'svix-signature': signer.sign(id, at, body),
        },
        body,
        signal: AbortSignal.any([stopped.signal, AbortSignal.timeout(timeoutMs)]),
      });
      await response.body?.cancel();
      if (response.ok) {
        sent += 1;
        return;
      }
      failed += 1;
      warn(`${payload.type} answered ${response.status}`);
    } catch (error) {
      if (stopped.signal.aborted) return;
      failed += 1;
      warn(
        `${payload.type} not delivered: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };

  const pump = (): void => {
    while (inFlight < concurrency && waiting.length > 0 && !stopped.signal.aborted) {
      const payload = waiting.shift() as WebhookPayload;
      inFlight += 1;
      void post(payload).finally(() => {
        inFlight -= 1;
        pump();
      });
    }
    if (inFlight === 0 && waiting.length === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  };

  return {
    send(payload) {
      if (stopped.signal.aborted) return false;
      if (waiting.length >= maxQueued) {
        dropped += 1;
        warn(`receiver too slow or down; dropped ${payload.type} (queue of ${maxQueued} full)`);
        return false;
      }
      waiting.push(payload);
      pump();
      return true;
    },
    statistics: () => ({ sent, failed, dropped, queued: waiting.length + inFlight }),
    idle: () =>
      inFlight === 0 && waiting.length === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => idleWaiters.push(resolve)),
    async close() {
      waiting.length = 0;
      stopped.abort();
      await new Promise<void>((resolve) => {
        if (inFlight === 0) resolve();
        else idleWaiters.push(resolve);
      });
    },
  };
}

/** Sends every webhook the world makes from now on; returns the call that stops it. */
export function sendWorldWebhooks(world: SimulatorWorld, sender: WebhookSender): () => void {
  return world.subscribe((event) => {
    for (const payload of webhookPayloads(event)) sender.send(payload);
  });
}

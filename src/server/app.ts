import type { RequestListener } from 'node:http';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import type { Registry } from 'prom-client';
import type { Logger } from '../log/logger.js';
import { MetricsPage } from '../metrics/metricsPage.js';
import type { SnapshotFamilies } from '../metrics/snapshotFamilies.js';
import { finishedAPoll, type SnapshotStore } from '../snapshot/store.js';
import { requireBasicAuth, type BasicAuthVerifier } from './basicAuth.js';
import { LANDING_PAGE_CSP, renderLandingPage } from './landingPage.js';
import { metricsEndpoint } from './metricsEndpoint.js';
import type { WebhookReceiver } from '../webhooks/receiver.js';
import { webhookEndpoint } from './webhookEndpoint.js';

export interface HttpAppOptions {
  registry: Registry;
  store: SnapshotStore;
  /** Families computed from the store alone, as registerExporterMetrics returns them. */
  snapshotMetrics: SnapshotFamilies;
  version: string;
  logger: Logger;
  intervals: { mergeQueueIntervalSeconds: number; flakyTestsIntervalSeconds: number };
  /** Unix seconds; the landing page's ages are measured from it. */
  now?: () => number;
  /** Basic auth in front of every endpoint; absent or without users, none. */
  auth?: BasicAuthVerifier;
  /** What `POST /-/reload` does; absent, the endpoint answers 403 like a disabled one. */
  reload?: ReloadEndpoint;
  /** The upstream is the built-in simulator (`--demo`); the landing page says so. */
  simulatedUpstream?: boolean;
  /** Answers `POST <webhooks.path>` while webhooks are enabled; absent, there is no such path. */
  webhooks?: WebhookReceiver;
}

/** The lifecycle endpoint's view of the exporter's reload. */
export interface ReloadEndpoint {
  /** `server.enableReload` of the running configuration. */
  readonly enabled: () => boolean;
  /** Reloads the configuration; `message` is the response body (what changed, or every problem). */
  readonly reload: () => Promise<{ readonly applied: boolean; readonly message: string }>;
}

/** Sent on every answer of the exporter. */
const SECURITY_HEADERS = { 'X-Content-Type-Options': 'nosniff' } as const;

/** How long a client should wait before asking /readyz again; about one first poll. */
const READY_RETRY_AFTER_SECONDS = 5;

/**
 * Builds the HTTP request listener: /metrics, the landing page, /healthz, /readyz and /-/reload, all
 * behind the optional basic auth. Serving never polls.
 */
export function createHttpApp(options: HttpAppOptions): RequestListener {
  const { registry, store, logger } = options;
  const now = options.now ?? (() => Date.now() / 1000);
  const page = new MetricsPage({ registry, store, snapshotMetrics: options.snapshotMetrics });
  const app = express();
  app.disable('x-powered-by');
  // ETags would hash every metrics page for a client that never revalidates.
  app.set('etag', false);

  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.set(SECURITY_HEADERS);
    next();
  });
  // Before basic auth: Svix cannot send credentials, and the signature authenticates each event.
  if (options.webhooks) app.use(webhookEndpoint(options.webhooks));
  app.use(closeAfterUnreadBody);
  // Every other endpoint, /healthz included, as Prometheus's web config does: a probe can send
  // the header.
  if (options.auth) app.use(requireBasicAuth(options.auth));

  app.route('/metrics').get(metricsEndpoint(page, logger)).all(methodNotAllowed);

  // Rendering the page walks every target; a request within the same second as the last render,
  // with no target changed since, gets that render's bytes, so a flood of requests costs sending
  // them rather than a render each.
  let landing: { readonly key: string; readonly page: Buffer } | undefined;
  app
    .route('/')
    .get((_req: Request, res: Response) => {
      const at = now();
      const settings = {
        mergeQueueIntervalSeconds: options.intervals.mergeQueueIntervalSeconds,
        flakyTestsIntervalSeconds: options.intervals.flakyTestsIntervalSeconds,
        webhookPath: options.webhooks?.path,
        // Only reached past requireBasicAuth, so with users configured the reader passed it.
        errorDetails: options.auth?.enabled === true,
      };
      const key = JSON.stringify([store.version, Math.floor(at), settings]);
      if (landing?.key !== key) {
        const html = renderLandingPage({
          ...settings,
          version: options.version,
          statuses: store.statuses(),
          now: at,
          simulatedUpstream: options.simulatedUpstream === true,
        });
        landing = { key, page: Buffer.from(html) };
      }
      const { page } = landing;
      res
        .status(200)
        .set({
          'Content-Type': 'text/html; charset=utf-8',
          'Content-Security-Policy': LANDING_PAGE_CSP,
          'Referrer-Policy': 'no-referrer',
          'X-Frame-Options': 'DENY',
          'Cache-Control': 'no-store',
        })
        .send(page);
    })
    .all(methodNotAllowed);

  app
    .route('/healthz')
    .get((_req: Request, res: Response) => {
      sendText(res, 200, 'ok\n');
    })
    .all(methodNotAllowed);

  app
    .route('/readyz')
    .get((_req: Request, res: Response) => {
      if (store.allPolledOnce()) {
        sendText(res, 200, 'ready\n');
        return;
      }
      const statuses = store.statuses();
      const waiting = statuses.filter((status) => !finishedAPoll(status)).length;
      const reasons = [
        ...(store.awaitingDiscovery
          ? ["waiting for discovery's first read of the organization's lists"]
          : []),
        ...(waiting > 0
          ? [`${waiting} of ${statuses.length} targets still waiting for their first poll`]
          : []),
      ];
      res.set('Retry-After', String(READY_RETRY_AFTER_SECONDS));
      sendText(res, 503, `not ready: ${reasons.join('; ')}\n`);
    })
    .all(methodNotAllowed);

  app
    .route('/-/reload')
    .post(async (_req: Request, res: Response) => {
      if (!options.reload?.enabled()) {
        sendText(res, 403, 'reload is disabled: set server.enableReload: true, or send SIGHUP\n');
        return;
      }
      const outcome = await options.reload.reload();
      sendText(res, outcome.applied ? 200 : 500, `${outcome.message}\n`);
    })
    .all((_req: Request, res: Response) => {
      res.set('Allow', 'POST');
      sendText(res, 405, 'method not allowed: use POST\n');
    });

  app.use((_req: Request, res: Response) => {
    sendText(res, 404, 'not found\n');
  });

  // Express needs all four parameters to recognise an error handler.
  app.use((error: unknown, req: Request, res: Response, next: NextFunction) => {
    const status = clientErrorStatus(error);
    if (status !== undefined) {
      sendText(res, status, 'bad request\n');
      return;
    }
    logger.error({ err: error, path: req.path, method: req.method }, 'HTTP request failed');
    if (res.headersSent) {
      next(error);
      return;
    }
    sendText(res, 500, 'internal server error\n');
  });

  return app;
}

/**
 * Marks the connection of a request that carries a body to close once answered: past the webhook
 * endpoint nothing reads a body, and to keep the connection Node.js would read and drop one at the
 * client's line rate until the request timeout.
 */
function closeAfterUnreadBody(req: Request, res: Response, next: NextFunction): void {
  const length = req.headers['content-length'];
  if (
    req.headers['transfer-encoding'] !== undefined ||
    (length !== undefined && Number(length) > 0)
  ) {
    res.set('Connection', 'close');
  }
  next();
}

function methodNotAllowed(_req: Request, res: Response): void {
  res.set('Allow', 'GET, HEAD');
  sendText(res, 405, 'method not allowed\n');
}

/** The 4xx status Express attached to an error it raised for a bad request, if any. */
function clientErrorStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('status' in error)) return undefined;
  const { status } = error;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : undefined;
}

function sendText(res: Response, status: number, body: string): void {
  res.status(status).set('Content-Type', 'text/plain; charset=utf-8').send(body);
}

import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Logger } from '../log/logger.js';
import { negotiateExpositionFormat, type ExpositionFormat } from '../metrics/exposition.js';
import type { MetricsPage, MetricsPageResponse } from '../metrics/metricsPage.js';
import { authorize, sendAuthFailure, type BasicAuthVerifier } from './basicAuth.js';
import { acceptsGzip } from './contentEncoding.js';

// Scrapes are the one request that comes often, so GET and HEAD of exactly /metrics are answered
// by a plain node:http listener in front of Express: Express's router and per-request setup cost
// more than sending the cached page. Everything else, including other spellings of the path
// (/metrics/, /METRICS), other methods and every other endpoint, goes to Express, whose /metrics
// route answers with the same serveMetrics. Both paths sit behind the same basic auth, and TLS is
// the server's, so it covers both.

/** Sent on every answer of the exporter, Express's included. */
export const SECURITY_HEADERS = { 'X-Content-Type-Options': 'nosniff' } as const;

/** Distinct Accept / Accept-Encoding values remembered; a scraper sends the same ones each time. */
const MAX_REMEMBERED_HEADERS = 64;

/** Answers /metrics requests from the cached page. */
export class MetricsEndpoint {
  readonly #page: MetricsPage;
  readonly #logger: Logger;
  readonly #formats = new Map<string | undefined, ExpositionFormat>();
  readonly #gzip = new Map<string | undefined, boolean>();
  /** The header block of each response, built once per response object. */
  readonly #headers = new WeakMap<MetricsPageResponse, string[]>();

  constructor(page: MetricsPage, logger: Logger) {
    this.#page = page;
    this.#logger = logger;
  }

  /** Answers a GET or HEAD of /metrics (auth already checked): the page, or 500 if it fails. */
  serve(req: IncomingMessage, res: ServerResponse): void {
    const { accept, 'accept-encoding': acceptEncoding } = req.headers;
    const format = remembered(this.#formats, accept, negotiateExpositionFormat);
    const acceptGzip = remembered(this.#gzip, acceptEncoding, acceptsGzip);
    const page = this.#page.current(format, acceptGzip);
    if (page !== undefined) {
      this.#send(res, page);
      return;
    }
    this.#page.render(format, { acceptGzip }).then(
      (rendered) => {
        this.#send(res, rendered);
      },
      (error: unknown) => {
        // A broken collector must cost one scrape, not the process.
        this.#logger.error({ err: error, format }, 'rendering metrics failed');
        const body = 'error rendering metrics; see the exporter log\n';
        res.writeHead(500, {
          ...SECURITY_HEADERS,
          'Content-Type': 'text/plain; charset=utf-8',
          'Content-Length': Buffer.byteLength(body),
        });
        res.end(body);
      },
    );
  }

  #send(res: ServerResponse, page: MetricsPageResponse): void {
    let headers = this.#headers.get(page);
    if (headers === undefined) {
      headers = headerBlock(page);
      this.#headers.set(page, headers);
    }
    res.writeHead(200, headers);
    // Corked, the headers and both parts leave in one writev, the cached buffers as they are.
    res.cork();
    for (const chunk of page.chunks) res.write(chunk);
    // 'finish' comes once the socket has taken the last byte: only then may the page be freed. A
    // response cut off before that never releases it, which leaves the page to the GC.
    res.end(page.release);
    res.uncork();
  }
}

/**
 * Wraps the Express app in a listener that answers GET and HEAD of /metrics itself, behind `auth`
 * when it has users, and passes every other request to `app`.
 */
export function withMetricsFastPath(
  app: RequestListener,
  endpoint: MetricsEndpoint,
  auth: BasicAuthVerifier | undefined,
): RequestListener {
  return (req, res) => {
    if (!isScrape(req)) {
      app(req, res);
      return;
    }
    if (auth === undefined || !auth.enabled) {
      endpoint.serve(req, res);
      return;
    }
    authorize(auth, req.headers.authorization).then(
      (verdict) => {
        if (verdict === 'valid') {
          endpoint.serve(req, res);
          return;
        }
        res.setHeader('X-Content-Type-Options', SECURITY_HEADERS['X-Content-Type-Options']);
        sendAuthFailure(res, verdict);
      },
      // Express runs the same check again and sends its failure to its error handler (log, 500).
      () => {
        app(req, res);
      },
    );
  };
}

/** GET or HEAD of exactly /metrics, with or without a query. */
function isScrape(req: IncomingMessage): boolean {
  const { method, url = '' } = req;
  return (
    (method === 'GET' || method === 'HEAD') && (url === '/metrics' || url.startsWith('/metrics?'))
  );
}

function headerBlock(page: MetricsPageResponse): string[] {
  return [
    'X-Content-Type-Options',
    SECURITY_HEADERS['X-Content-Type-Options'],
    'Content-Type',
    page.contentType,
    'Content-Length',
    String(page.length),
    'Vary',
    'Accept-Encoding',
    ...(page.contentEncoding === undefined ? [] : ['Content-Encoding', page.contentEncoding]),
  ];
}

/** `compute(header)`, remembered per header value; forgets everything when the map is full. */
function remembered<T>(
  cache: Map<string | undefined, T>,
  header: string | undefined,
  compute: (header: string | undefined) => T,
): T {
  const known = cache.get(header);
  if (known !== undefined) return known;
  const value = compute(header);
  if (cache.size >= MAX_REMEMBERED_HEADERS) cache.clear();
  cache.set(header, value);
  return value;
}

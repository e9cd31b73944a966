import type { Request, Response } from 'express';
import type { Logger } from '../log/logger.js';
import { negotiateExpositionFormat } from '../metrics/exposition.js';
import type { ExpositionFormat } from '../metrics/exposition.js';
import type { MetricsPage, MetricsPageResponse } from '../metrics/metricsPage.js';
import { acceptsGzip } from './contentEncoding.js';

/** The page's format follows Accept and its encoding Accept-Encoding, so a cache must key on both. */
const VARY = 'Accept, Accept-Encoding';

/** The /metrics route: the page in the format and encoding the scraper asks for, or 500 if it fails. */
export function metricsEndpoint(
  page: MetricsPage,
  logger: Logger,
): (req: Request, res: Response) => void {
  // A scraper sends the same Accept header on every scrape; parsing it costs more than a lookup.
  let negotiated: { readonly accept: string | undefined; readonly format: ExpositionFormat } = {
    accept: undefined,
    format: negotiateExpositionFormat(undefined),
  };
  return (req, res) => {
    const accept = req.headers.accept;
    if (accept !== negotiated.accept) {
      negotiated = { accept, format: negotiateExpositionFormat(accept) };
    }
    const format = negotiated.format;
    const acceptGzip = acceptsGzip(req.headers['accept-encoding']);
    // Set before rendering so that the 500 of a failed render carries it too.
    res.setHeader('Vary', VARY);
    page.render(format, { acceptGzip }).then(
      (rendered) => {
        send(res, rendered);
      },
      (error: unknown) => {
        // A broken collector must cost one scrape, not the process.
        logger.error({ err: error, format }, 'rendering metrics failed');
        res
          .status(500)
          .type('text/plain; charset=utf-8')
          .send('error rendering metrics; see the exporter log\n');
      },
    );
  };
}

function send(res: Response, page: MetricsPageResponse): void {
  res.writeHead(200, {
    'Content-Type': page.contentType,
    'Content-Length': String(page.length),
    ...(page.contentEncoding !== undefined && { 'Content-Encoding': page.contentEncoding }),
  });
  // Corked, the headers and every chunk leave in one writev, the cached buffers as they are.
  res.cork();
  for (const chunk of page.chunks) res.write(chunk);
  res.end();
  res.uncork();
}

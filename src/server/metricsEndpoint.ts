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
    const overTls = 'encrypted' in req.socket;
    // Set before rendering so that the 500 of a failed render carries it too.
    res.setHeader('Vary', VARY);
    page.render(format, { acceptGzip }).then(
      (rendered) => {
        send(res, rendered, overTls);
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

/**
 * Bytes of the page handed to a TLS socket at a time (one TLS record). TLS encrypts whatever it is
 * given at once, into memory of its own that waits there until the client reads it: a page written
 * whole would be copied once per client still reading it.
 */
const TLS_WRITE_BYTES = 16 * 1024;

function send(res: Response, page: MetricsPageResponse, overTls: boolean): void {
  res.writeHead(200, {
    'Content-Type': page.contentType,
    'Content-Length': String(page.length),
    ...(page.contentEncoding !== undefined && { 'Content-Encoding': page.contentEncoding }),
  });
  if (overTls) {
    sendAsTheClientReads(res, page.chunks);
    return;
  }
  // Corked, the headers and every chunk leave in one writev, the cached buffers as they are.
  res.cork();
  for (const chunk of page.chunks) res.write(chunk);
  res.end();
  res.uncork();
}

/**
 * Writes `chunks` in pieces of at most TLS_WRITE_BYTES, each once the socket has sent the ones
 * before, so that only those pieces are ever encrypted ahead of the client.
 */
function sendAsTheClientReads(res: Response, chunks: readonly Buffer[]): void {
  const pieces = piecesOf(chunks, TLS_WRITE_BYTES);
  const writeOn = (): void => {
    for (let piece = pieces.next(); piece.done !== true; piece = pieces.next()) {
      if (!res.write(piece.value)) {
        res.once('drain', writeOn);
        return;
      }
    }
    res.end();
  };
  writeOn();
}

/** `chunks` cut into views of at most `size` bytes, in order; nothing is copied. */
function* piecesOf(chunks: readonly Buffer[], size: number): Generator<Buffer> {
  for (const chunk of chunks) {
    for (let start = 0; start < chunk.length; start += size) {
      yield chunk.subarray(start, start + size);
    }
  }
}

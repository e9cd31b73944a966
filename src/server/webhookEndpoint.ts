import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  MAX_WEBHOOK_BODY_BYTES,
  type WebhookAnswer,
  type WebhookReceiver,
} from '../webhooks/receiver.js';
import {
  ConcurrentBodyReads,
  DEFAULT_BODY_READ_LIMITS,
  type BodyReadLimits,
} from './webhookBodyReads.js';
import { contentCodings, decodeContent, UndecodableBody } from './webhookBodyEncoding.js';

/**
 * `POST <webhooks.path>`, mounted before basic auth (Svix cannot send credentials; the signature is
 * the authentication). Everything an unsigned request could make expensive is refused first, from
 * the headers alone: missing, malformed or stale signature headers (401), an announced body over 1
 * MiB (413), a Content-Encoding other than gzip, deflate or br (415). Only then is the body read,
 * as one of the concurrent body reads (webhookBodyReads.ts), within `webhooks.bodyTimeoutSeconds`
 * (else 408); a body that passes 1 MiB is answered 413 at once, and a reader whose place a faster
 * newcomer took gets 503. An encoded body is decoded, to 1 MiB at most, before it is verified
 * (webhookBodyEncoding.ts). The connection is closed after any refusal, so the rest of a refused
 * body is not waited for. Every answer is counted by the receiver.
 */
export function webhookEndpoint(
  receiver: WebhookReceiver,
  limits: BodyReadLimits = DEFAULT_BODY_READ_LIMITS,
): RequestHandler {
  const bodyReads = new ConcurrentBodyReads(limits);
  return (req: Request, res: Response, next: NextFunction) => {
    const path = receiver.path;
    // With a trailing slash too, as Express matches the exporter's other paths: an endpoint URL
    // pasted into Svix with one would otherwise get 404 on every delivery, counted nowhere here.
    if (path === undefined || (req.path !== path && req.path !== `${path}/`)) {
      next();
      return;
    }
    if (req.method !== 'POST') {
      res.set('Allow', 'POST');
      refuse(req, res, receiver.methodNotAllowed());
      return;
    }
    const checked = receiver.checkHeaders((name) => req.headersDistinct[name]);
    if ('answer' in checked) {
      refuse(req, res, checked.answer);
      return;
    }
    const announced = req.get('content-length');
    if (announced !== undefined && Number(announced) > MAX_WEBHOOK_BODY_BYTES) {
      refuse(req, res, receiver.tooLarge());
      return;
    }
    const codings = contentCodings(req.get('content-encoding'));
    if (codings === undefined) {
      refuse(req, res, receiver.unsupportedEncoding());
      return;
    }
    const chunks: Buffer[] = [];
    let length = 0;
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearTimeout(deadline);
      bodyRead.release();
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', finish);
      req.off('close', finish);
    };
    /** Ends the read with a refusal and closes the connection once it is sent. */
    const stop = (answer: () => WebhookAnswer): void => {
      if (finished) return;
      finish();
      chunks.length = 0;
      refuse(req, res, answer());
    };
    const bodyRead = bodyReads.acquire(req.socket.remoteAddress ?? '', () => {
      stop(() => receiver.busy());
    });
    const deadline = setTimeout(() => {
      stop(() => receiver.timedOut());
    }, receiver.bodyTimeoutMs);
    const onData = (chunk: Buffer): void => {
      length += chunk.length;
      bodyRead.received(chunk.length);
      if (length > MAX_WEBHOOK_BODY_BYTES) {
        stop(() => receiver.tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      const body = Buffer.concat(chunks, length);
      if (codings.length === 0) {
        finish();
        send(res, receiver.receive(checked.headers, body));
        return;
      }
      // Decoding is part of the read: it keeps the body's slot and its deadline until it is done.
      // The request's 'close' now only says its body was all read.
      req.off('close', finish);
      decodeContent(body, codings, MAX_WEBHOOK_BODY_BYTES).then(
        (decoded) => {
          if (finished) return;
          finish();
          send(res, receiver.receive(checked.headers, decoded));
        },
        (error: unknown) => {
          const tooLarge = error instanceof UndecodableBody && error.tooLarge;
          stop(() => (tooLarge ? receiver.tooLarge() : receiver.undecodable(errorMessage(error))));
        },
      );
    };
    req.on('data', onData);
    req.on('end', onEnd);
    // A client that goes away mid-body frees its place; there is nobody to answer.
    req.on('error', finish);
    req.on('close', finish);
  };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function send(res: Response, answer: WebhookAnswer): void {
  if (answer.status === 204) {
    res.status(204).end();
    return;
  }
  res
    .status(answer.status)
    .set('Content-Type', 'text/plain; charset=utf-8')
    .send(`${answer.message}\n`);
}

/** Answers and closes the connection: the rest of the body, if any, is never read. */
function refuse(req: Request, res: Response, answer: WebhookAnswer): void {
  res.set('Connection', 'close');
  // Svix retries on its own schedule; another client is told when to try again.
  if (answer.status === 503) res.set('Retry-After', '1');
  res.on('finish', () => {
    req.socket.destroySoon();
  });
  send(res, answer);
}

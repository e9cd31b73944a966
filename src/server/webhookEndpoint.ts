import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  MAX_WEBHOOK_BODY_BYTES,
  type WebhookAnswer,
  type WebhookReceiver,
} from '../webhooks/receiver.js';

/**
 * Bodies read at once; a request beyond them is answered 503 before its body is read, and Svix
 * delivers it again later. Together with the size limit it bounds the memory webhooks can take.
 */
export const MAX_CONCURRENT_WEBHOOK_BODIES = 4;

/**
 * `POST <webhooks.path>`, mounted before basic auth (Svix cannot send credentials; the signature
 * is the authentication). Everything an unsigned request could make expensive is refused first,
 * from the headers alone: a missing or stale signature (401), an announced body over 1 MiB (413),
 * too many bodies already being read (503). Only then is the body read, and a body that passes
 * 1 MiB is answered 413 at once. The connection is closed after any refusal, so the rest of a
 * refused body is not waited for.
 */
export function webhookEndpoint(
  receiver: WebhookReceiver,
  maxConcurrentBodies = MAX_CONCURRENT_WEBHOOK_BODIES,
): RequestHandler {
  let reading = 0;
  return (req: Request, res: Response, next: NextFunction) => {
    const path = receiver.path;
    if (path === undefined || req.path !== path) {
      next();
      return;
    }
    if (req.method !== 'POST') {
      res.set('Allow', 'POST');
      refuse(res, 405, 'method not allowed: use POST');
      return;
    }
    const checked = receiver.checkHeaders((name) => req.get(name));
    if ('answer' in checked) {
      send(res, checked.answer, true);
      return;
    }
    const announced = req.get('content-length');
    if (announced !== undefined && Number(announced) > MAX_WEBHOOK_BODY_BYTES) {
      send(res, receiver.tooLarge(), true);
      return;
    }
    if (reading >= maxConcurrentBodies) {
      res.set('Retry-After', '1');
      refuse(res, 503, 'too many webhook requests at once; retry later');
      return;
    }
    reading++;
    const chunks: Buffer[] = [];
    let length = 0;
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      reading--;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', finish);
      req.off('close', finish);
    };
    const onData = (chunk: Buffer): void => {
      length += chunk.length;
      if (length > MAX_WEBHOOK_BODY_BYTES) {
        finish();
        chunks.length = 0;
        send(res, receiver.tooLarge(), true);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      finish();
      send(res, receiver.receive(checked.headers, Buffer.concat(chunks, length)), false);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    // A client that goes away mid-body frees its slot; there is nobody to answer.
    req.on('error', finish);
    req.on('close', finish);
  };
}

function send(res: Response, answer: WebhookAnswer, closeConnection: boolean): void {
  if (answer.status === 204) {
    res.status(204).end();
    return;
  }
  if (closeConnection) res.set('Connection', 'close');
  res
    .status(answer.status)
    .set('Content-Type', 'text/plain; charset=utf-8')
    .send(`${answer.message}\n`);
}

function refuse(res: Response, status: number, message: string): void {
  res.set('Connection', 'close');
  res.status(status).set('Content-Type', 'text/plain; charset=utf-8').send(`${message}\n`);
}

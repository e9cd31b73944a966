// Signs webhook requests as Svix does, two ways: with the svix library the exporter verifies with,
// and with an HMAC-SHA256 written here from Svix's specification, so that a misuse of the library
// on both sides cannot pass unnoticed.
import { createHmac, randomUUID } from 'node:crypto';
import { request, type ClientRequest } from 'node:http';
import { Webhook } from 'svix';

/** A signing secret as Trunk shows it (whsec_ + base64 of 24 random-looking bytes). */
export const WEBHOOK_SECRET = 'whsec_C2FtcGxlLXdlYmhvb2stc2VjcmV0LTA0Mg==';
/** Another valid secret: what the exporter is not configured with. */
export const OTHER_WEBHOOK_SECRET = 'whsec_b3RoZXItd2ViaG9vay1zZWNyZXQtOTk5OQ==';

/** The body of Trunk's pull_request.merged event of PR `prNumber` of github.com/acme/web main, merged at `at`. */
export function mergedEventBody(prNumber: number, at: number): string {
  return JSON.stringify({
    action: 'merged',
    pr_number: prNumber,
    repository: { host: 'github.com', owner: 'acme', name: 'web' },
    target_branch: 'main',
    status: 'merged',
    timestamp: new Date(at * 1000).toISOString(),
    type: 'pull_request.merged',
  });
}

/**
 * `body` as Trunk would send it now: its event `timestamp` (a zoned date-time) moved to the present,
 * every other byte as it was. An event dated before the exporter started (a fixture's date) counts
 * only as an event received, so a fixture that pins what an event counts is delivered as new.
 */
export function datedNow(body: string, now = new Date()): string {
  return body.replace(
    /("timestamp"\s*:\s*")(\d{4}-\d\d-\d\dT[^"]*(?:Z|[+-]\d\d:\d\d))"/,
    (_match, key: string) => `${key}${now.toISOString()}"`,
  );
}

/** `v1,<base64>` by the svix library. */
export function svixSignature(secret: string, id: string, timestamp: number, body: string): string {
  return new Webhook(secret).sign(id, new Date(timestamp * 1000), body);
}

/** `v1,<base64>` by hand: HMAC-SHA256 keyed by the decoded secret over `id.timestamp.body`. */
export function hmacSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three Svix headers for `body`, signed now (or at `timestamp`) with `secret`. */
export function signedHeaders(
  body: string,
  options: {
    secret?: string;
    id?: string;
    timestamp?: number;
    sign?: typeof svixSignature;
  } = {},
): Record<string, string> {
  const id = options.id ?? `msg_${randomUUID()}`;
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  const sign = options.sign ?? svixSignature;
  return {
    'content-type': 'application/json',
    'svix-id': id,
    'svix-timestamp': String(timestamp),
    'svix-signature': sign(options.secret ?? WEBHOOK_SECRET, id, timestamp, body),
  };
}

/** POSTs `body` with `headers`; the status and text of the answer. */
export async function postWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { method: 'POST', body, headers });
  return { status: response.status, text: await response.text() };
}

/**
 * Sends the headers of a POST announcing `announcedBytes` and then a trickle of `chunkBytes`
 * every 100 ms; resolves with the status as soon as an answer arrives, and how many body bytes
 * had been sent by then.
 */
export function slowPost(
  url: string,
  headers: Record<string, string>,
  options: { announcedBytes?: number; chunkBytes: number },
): Promise<{ status: number; sentBytes: number; elapsedMs: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    let sentBytes = 0;
    const req = request(url, {
      method: 'POST',
      headers: {
        ...headers,
        ...(options.announcedBytes === undefined
          ? { 'transfer-encoding': 'chunked' }
          : { 'content-length': String(options.announcedBytes) }),
      },
    });
    const trickle = setInterval(() => {
      req.write(Buffer.alloc(options.chunkBytes, 0x20));
      sentBytes += options.chunkBytes;
    }, 100);
    req.on('response', (response) => {
      clearInterval(trickle);
      resolve({ status: response.statusCode ?? 0, sentBytes, elapsedMs: Date.now() - started });
      response.resume();
      req.destroy();
    });
    req.on('error', (error) => {
      clearInterval(trickle);
      reject(error);
    });
    req.flushHeaders();
  });
}

/**
 * POSTs `body` (bytes as they go on the wire) with `headers`, where a header given several values
 * is sent as that many lines, as a proxy may repeat one; the status and text of the answer.
 */
export function postWebhookLines(
  url: string,
  body: string | Buffer,
  headers: Record<string, string | readonly string[]>,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent: false });
    for (const [name, value] of Object.entries(headers)) req.setHeader(name, value);
    req.setHeader('content-length', String(Buffer.byteLength(body)));
    req.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** POSTs `body` with `headers` from `localAddress` (one peer address per loopback address). */
export function postWebhookFrom(
  url: string,
  body: string,
  headers: Record<string, string>,
  localAddress: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      localAddress,
      agent: false,
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
    });
    req.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The slow-body attack from `localAddress`: `connections` requests at once, each with headers that
 * pass the pre-check (a current timestamp, any id, any `v1,` signature), announcing 1 MiB and
 * sending one byte a second; each is reopened as soon as it is answered or cut. Returns a stop
 * function and the statuses the attackers got.
 */
export function slowBodyAttack(
  url: string,
  localAddress: string,
  connections: number,
): { stop: () => void; statuses: number[] } {
  const statuses: number[] = [];
  const open = new Set<{ req: ClientRequest; trickle: NodeJS.Timeout }>();
  let stopped = false;
  const connect = (): void => {
    if (stopped) return;
    const req = request(url, {
      method: 'POST',
      localAddress,
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': String(1024 * 1024),
        'svix-id': `msg_${randomUUID()}`,
        'svix-timestamp': String(Math.floor(Date.now() / 1000)),
        'svix-signature': `v1,${Buffer.from(randomUUID()).toString('base64')}`,
      },
    });
    const trickle = setInterval(() => req.write('{'), 1000);
    const entry = { req, trickle };
    open.add(entry);
    let reopened = false;
    const reopen = (): void => {
      clearInterval(trickle);
      open.delete(entry);
      if (reopened) return;
      reopened = true;
      req.destroy();
      connect();
    };
    req.on('response', (response) => {
      statuses.push(response.statusCode ?? 0);
      response.resume();
      reopen();
    });
    req.on('error', reopen);
    req.on('close', reopen);
    req.write('{');
  };
  for (let index = 0; index < connections; index++) connect();
  return {
    statuses,
    stop: () => {
      stopped = true;
      for (const { req, trickle } of open) {
        clearInterval(trickle);
        req.destroy();
      }
    },
  };
}

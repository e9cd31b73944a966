import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import bcrypt from 'bcryptjs';
import type { NextFunction, Request, Response } from 'express';

/** Successful verifications remembered, so a scraper pays bcrypt's cost once, not per scrape. */
const MAX_REMEMBERED = 100;

/** Sent with every 401 so that browsers and curl know to ask for credentials. */
export const BASIC_AUTH_CHALLENGE = 'Basic realm="trunk-exporter", charset="UTF-8"';

/**
 * Checks HTTP basic-auth credentials against bcrypt hashes, as Prometheus's web config does. A
 * success is cached under a SHA-256 of (username, hash, password), never the password itself; an
 * unknown username is checked against a configured hash anyway, so it costs the same time as a
 * known one and answers cannot tell which usernames exist.
 */
export class BasicAuthVerifier {
  #users: ReadonlyMap<string, string>;
  readonly #remembered = new Set<string>();
  readonly #compare: (password: string, hash: string) => Promise<boolean>;

  /** `compare` is bcrypt's; tests wrap it to count how often it runs. */
  constructor(
    users: ReadonlyMap<string, string>,
    compare: (password: string, hash: string) => Promise<boolean> = bcrypt.compare,
  ) {
    this.#users = users;
    this.#compare = compare;
  }

  /** Whether any user is configured; with none, every request is let through. */
  get enabled(): boolean {
    return this.#users.size > 0;
  }

  /** Replaces the users (on reload); remembered successes of the old ones are forgotten. */
  setUsers(users: ReadonlyMap<string, string>): void {
    this.#users = users;
    this.#remembered.clear();
  }

  /** Whether `password` is the password of `username`. */
  async verify(username: string, password: string): Promise<boolean> {
    const users = this.#users;
    const hash = users.get(username);
    const key = createHash('sha256')
      .update(JSON.stringify([username, hash ?? '', password]))
      .digest('hex');
    if (hash !== undefined && this.#remembered.has(key)) return true;
    const [anyHash] = users.values();
    if (anyHash === undefined) return false;
    const matches = await this.#compare(password, hash ?? anyHash);
    if (hash === undefined || !matches) return false;
    // Users may have changed while bcrypt ran; remember only what is still true.
    if (this.#users === users) {
      if (this.#remembered.size >= MAX_REMEMBERED) this.#remembered.clear();
      this.#remembered.add(key);
    }
    return true;
  }
}

/** Express middleware: 401 with a Basic challenge unless the request carries valid credentials. */
export function requireBasicAuth(verifier: BasicAuthVerifier) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (await isAuthorized(verifier, req.headers.authorization)) next();
    else sendUnauthorized(res);
  };
}

/** Whether a request with this Authorization header may pass: always, when no user is configured. */
export async function isAuthorized(
  verifier: BasicAuthVerifier,
  authorization: string | undefined,
): Promise<boolean> {
  if (!verifier.enabled) return true;
  const credentials = parseBasicAuthorization(authorization);
  return credentials !== undefined && verifier.verify(credentials.username, credentials.password);
}

/** Answers 401 with the Basic challenge, on a plain node:http response (Express's included). */
export function sendUnauthorized(res: ServerResponse): void {
  const body = 'unauthorized\n';
  res.writeHead(401, {
    'WWW-Authenticate': BASIC_AUTH_CHALLENGE,
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** `Basic dXNlcjpwYXNz` → {username, password}; undefined for anything else. */
export function parseBasicAuthorization(
  header: string | undefined,
): { username: string; password: string } | undefined {
  const match = /^basic +([A-Za-z0-9+/]+=*) *$/i.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { compareInWorker } from './bcryptThread.js';
import { BcryptQueue, QUEUE_FULL } from './bcryptQueue.js';
import { peerAddress } from './peerAddress.js';

/** Successful verifications remembered, so a scraper pays bcrypt's cost once, not per scrape. */
const MAX_REMEMBERED = 100;
/** Failed (user, password) pairs remembered, and for how long: a scraper with a stale password, or a
 * client repeating one guess, pays bcrypt's cost once a minute, not once per request. */
const MAX_REMEMBERED_FAILURES = 1_000;
const FAILURE_MEMORY_MS = 60_000;
/**
 * Client addresses whose failed checks are counted (for a minute after the last), the oldest
 * forgotten first: a waiter from an address that failed lately gives its place to one from an
 * address that did not (BcryptQueue).
 */
const MAX_FAILING_ADDRESSES = 1_000;
/** Comparisons waiting their turn, from one client address and in all; beyond, 429 unhashed. */
const BCRYPT_WAITING_PER_ADDRESS = 4;
const BCRYPT_WAITING = 32;

/** Sent with every 401 so that browsers and curl know to ask for credentials. */
export const BASIC_AUTH_CHALLENGE = 'Basic realm="trunk-exporter", charset="UTF-8"';
/** Seconds a client turned away with 429 (the bcrypt queue full) is asked to wait. */
export const AUTH_BUSY_RETRY_AFTER_SECONDS = 1;

/** A credentials check's outcome; `busy`: not checked, the bcrypt queue was full. */
export type AuthVerdict = 'valid' | 'invalid' | 'busy';

/** Test seams of BasicAuthVerifier. */
export interface BasicAuthVerifierOptions {
  /** bcrypt's compare (in a worker thread by default); tests wrap it to count or hold the comparisons. */
  readonly compare?: (password: string, hash: string) => Promise<boolean>;
  /** Milliseconds since the epoch: how long failures are remembered, and refusals padded. */
  readonly now?: () => number;
}

/**
 * Checks HTTP basic-auth credentials against bcrypt hashes, as Prometheus's web config does, at a
 * bounded cost: successes are remembered, failures too for a minute (each under a SHA-256 of
 * (username, hash, password), never the password itself), and one comparison runs at a time, in
 * a worker thread, with the turns shared round-robin by client address (BcryptQueue), so a flood
 * of wrong passwords neither holds up the event loop nor locks a new scraper out. A refused
 * check's turn lasts no less than a comparison against the costliest configured hash takes (timed
 * once per set of users, then again by each comparison against that hash, so the wait follows the
 * machine's load), so neither its answer's time nor the turns of others tell which usernames exist
 * or which are hashed at a lower cost; an unknown username's turn is that wait, without hashing.
 */
export class BasicAuthVerifier {
  #users: ReadonlyMap<string, string>;
  /** The costliest hash of #users, and the milliseconds the last comparison against it took. */
  #costliest: { readonly hash: string | undefined; ms: Promise<number> };
  readonly #remembered = new Set<string>();
  /** Key → when the failure is forgotten; in insertion order, so the first entry is the oldest. */
  readonly #failures = new Map<string, number>();
  /** Address → its failed checks since it last went a minute without one, and when they are forgotten. */
  readonly #failingAddresses = new Map<string, { count: number; forgetAt: number }>();
  readonly #comparisons = new BcryptQueue(
    { perAddress: BCRYPT_WAITING_PER_ADDRESS, total: BCRYPT_WAITING },
    (address) => this.#recentFailuresFrom(address),
  );
  readonly #compare: (password: string, hash: string) => Promise<boolean>;
  readonly #now: () => number;

  constructor(users: ReadonlyMap<string, string>, options: BasicAuthVerifierOptions = {}) {
    this.#users = users;
    this.#compare = options.compare ?? compareInWorker;
    this.#now = options.now ?? Date.now;
    this.#costliest = this.#timeCostliest(users);
  }

  /** Whether any user is configured; with none, every request is let through. */
  get enabled(): boolean {
    return this.#users.size > 0;
  }

  /** Replaces the users (on reload); remembered successes and failures of the old ones are forgotten. */
  setUsers(users: ReadonlyMap<string, string>): void {
    this.#users = users;
    this.#costliest = this.#timeCostliest(users);
    this.#remembered.clear();
    this.#failures.clear();
    this.#failingAddresses.clear();
  }

  /** Whether `password` is the password of `username`; false also when it could not be checked. */
  async verify(username: string, password: string): Promise<boolean> {
    return (await this.check(username, password)) === 'valid';
  }

  /**
   * Checks `password` against `username`'s hash in `address`'s turn (the client's address, whose
   * requests wait behind each other's but not behind other addresses'), or answers `busy` unhashed.
   */
  async check(username: string, password: string, address = ''): Promise<AuthVerdict> {
    const users = this.#users;
    const hash = users.get(username);
    const key = createHash('sha256')
      .update(JSON.stringify([username, hash ?? '', password]))
      .digest('hex');
    if (hash !== undefined && this.#remembered.has(key)) return 'valid';
    // A repeated guess is answered at once, whatever the username.
    if (this.#failedRecently(key)) {
      this.#countFailureFrom(address);
      return 'invalid';
    }
    if (users.size === 0) return 'invalid';
    // An unknown username still takes a turn as long as a known one's, so it meets the same `busy`
    // and delays the turns behind it as much.
    const matches = await this.#comparisons.run(address, async () => {
      const turnStartedAt = this.#now();
      const right = hash !== undefined && (await this.#timedCompare(password, hash));
      if (!right) await this.#padRefusal(turnStartedAt);
      return right;
    });
    if (matches === QUEUE_FULL) return 'busy';
    const valid = hash !== undefined && matches;
    // Users may have changed while bcrypt ran; remember only what is still true.
    if (this.#users === users) {
      if (valid) {
        if (this.#remembered.size >= MAX_REMEMBERED) this.#remembered.clear();
        this.#remembered.add(key);
      } else {
        this.#rememberFailure(key);
        this.#countFailureFrom(address);
      }
    }
    return valid ? 'valid' : 'invalid';
  }

  /** Waits (a timer, no CPU) until the costliest comparison would have ended, counted from `startedAt`. */
  async #padRefusal(startedAt: number): Promise<void> {
    const waitMs = startedAt + (await this.#costliest.ms) - this.#now();
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  }

  /** Compares, and keeps the time it took when `hash` is the costliest. */
  async #timedCompare(password: string, hash: string): Promise<boolean> {
    const startedAt = this.#now();
    const matches = await this.#compare(password, hash);
    const costliest = this.#costliest;
    if (hash === costliest.hash) costliest.ms = Promise.resolve(this.#now() - startedAt);
    return matches;
  }

  /** The costliest hash of `users`, timed by one comparison: the one bcrypt run it takes. */
  #timeCostliest(users: ReadonlyMap<string, string>): {
    hash: string | undefined;
    ms: Promise<number>;
  } {
    const hash = costliestHash(users);
    if (hash === undefined) return { hash, ms: Promise.resolve(0) };
    const startedAt = this.#now();
    const ms = this.#compare('', hash).then(
      () => this.#now() - startedAt,
      () => this.#now() - startedAt,
    );
    return { hash, ms };
  }

  #failedRecently(key: string): boolean {
    const forgetAt = this.#failures.get(key);
    if (forgetAt === undefined) return false;
    if (forgetAt > this.#now()) return true;
    this.#failures.delete(key);
    return false;
  }

  #recentFailuresFrom(address: string): number {
    const failing = this.#failingAddresses.get(address);
    return failing !== undefined && failing.forgetAt > this.#now() ? failing.count : 0;
  }

  #countFailureFrom(address: string): void {
    const count = this.#recentFailuresFrom(address) + 1;
    this.#failingAddresses.delete(address);
    if (this.#failingAddresses.size >= MAX_FAILING_ADDRESSES) {
      const [oldest] = this.#failingAddresses.keys();
      if (oldest !== undefined) this.#failingAddresses.delete(oldest);
    }
    this.#failingAddresses.set(address, { count, forgetAt: this.#now() + FAILURE_MEMORY_MS });
  }

  #rememberFailure(key: string): void {
    this.#failures.delete(key);
    if (this.#failures.size >= MAX_REMEMBERED_FAILURES) {
      const [oldest] = this.#failures.keys();
      if (oldest !== undefined) this.#failures.delete(oldest);
    }
    this.#failures.set(key, this.#now() + FAILURE_MEMORY_MS);
  }
}

/** The cost of a bcrypt hash (`$2y$12$…` → 12); 0 for anything else. */
function bcryptCost(hash: string): number {
  return Number(/^\$2[aby]\$(\d{2})\$/.exec(hash)?.[1] ?? 0);
}

/** The hash of the highest bcrypt cost; the first of equals. */
function costliestHash(users: ReadonlyMap<string, string>): string | undefined {
  let costliest: { hash: string; cost: number } | undefined;
  for (const hash of users.values()) {
    const cost = bcryptCost(hash);
    if (costliest === undefined || cost > costliest.cost) costliest = { hash, cost };
  }
  return costliest?.hash;
}

/**
 * A warning when the users' hashes have different bcrypt costs: every refused request then waits
 * as long as the costliest comparison, and a right password answers at its own cost.
 */
export function bcryptCostWarning(users: ReadonlyMap<string, string>): string | undefined {
  const costs = new Map(Array.from(users, ([username, hash]) => [username, bcryptCost(hash)]));
  const distinct = new Set(costs.values());
  if (distinct.size < 2) return undefined;
  const listed = Array.from(costs, ([username, cost]) => `${username}: ${cost}`).join(', ');
  return (
    `server.basicAuthUsers: the bcrypt costs differ (${listed}); every refused request waits as ` +
    `long as a cost-${Math.max(...distinct)} comparison, so hash every user at the same cost`
  );
}

/** Express middleware: 401 with a Basic challenge unless the request carries valid credentials. */
export function requireBasicAuth(verifier: BasicAuthVerifier) {
  /** Connections on which a check was refused (401 or 429). */
  const refused = new WeakSet<Socket>();
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const verdict = await authorize(verifier, req.headers.authorization, req.socket, refused);
    if (verdict === 'valid') {
      next();
      return;
    }
    refused.add(req.socket);
    sendAuthFailure(res, verdict);
  };
}

/** The verdict on a request's Authorization header: `valid` for anyone when no user is configured. */
async function authorize(
  verifier: BasicAuthVerifier,
  authorization: string | undefined,
  socket: Socket,
  refused: WeakSet<Socket>,
): Promise<AuthVerdict> {
  if (!verifier.enabled) return 'valid';
  const credentials = parseBasicAuthorization(authorization);
  if (credentials === undefined) return 'invalid';
  // A client flooding wrong passwords over kept connections from a scraper's own address (one
  // host, a proxy) would keep that address's places in line full, and a scraper checked for the
  // first time would get 429 throughout: connections refused before wait in a line of their own.
  const address = peerAddress(socket);
  const line = refused.has(socket) ? `${address} refused before` : address;
  return verifier.check(credentials.username, credentials.password, line);
}

/** Answers a failed check: 401 with the Basic challenge, or 429 with Retry-After when `busy`. */
function sendAuthFailure(res: ServerResponse, verdict: Exclude<AuthVerdict, 'valid'>): void {
  if (verdict === 'invalid') {
    sendUnauthorized(res);
    return;
  }
  const body = 'too many authentication attempts; retry later\n';
  res.writeHead(429, {
    'Retry-After': String(AUTH_BUSY_RETRY_AFTER_SECONDS),
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}

/** Answers 401 with the Basic challenge. */
function sendUnauthorized(res: ServerResponse): void {
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

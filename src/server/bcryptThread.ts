import { Worker } from 'node:worker_threads';

/** A comparison asked of the worker. */
export interface BcryptRequest {
  readonly id: number;
  readonly password: string;
  readonly hash: string;
}

/** The worker's answer to the request of the same id. */
export interface BcryptAnswer {
  readonly id: number;
  readonly matches: boolean;
}

// Under vitest the sources run as .ts, which Node's type stripping loads in a worker as well.
const WORKER_URL = new URL(
  import.meta.url.endsWith('.ts') ? './bcryptWorker.ts' : './bcryptWorker.js',
  import.meta.url,
);

let worker: Worker | undefined;
let nextId = 0;
const pending = new Map<
  number,
  { resolve: (matches: boolean) => void; reject: (error: Error) => void }
>();

/** The worker, started on the first comparison and again after one that died. */
function bcryptWorker(): Worker {
  if (worker !== undefined) return worker;
  const started = new Worker(WORKER_URL);
  // Idle, it must not keep the process alive; compareInWorker refs it while a comparison is pending.
  started.unref();
  started.on('message', ({ id, matches }: BcryptAnswer) => {
    pending.get(id)?.resolve(matches);
    pending.delete(id);
    if (pending.size === 0) started.unref();
  });
  const fail = (error: Error): void => {
    if (worker === started) worker = undefined;
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };
  started.on('error', fail);
  started.on('exit', (code) => {
    fail(new Error(`bcrypt worker exited with code ${code}`));
  });
  worker = started;
  return started;
}

/**
 * bcrypt's compare, run in a worker thread: bcryptjs's own async compare runs on the event loop in
 * slices, so each comparison would hold every scrape behind it. The worker takes the
 * requests in order, one at a time; BcryptQueue decides which runs when.
 */
export function compareInWorker(password: string, hash: string): Promise<boolean> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    const request: BcryptRequest = { id, password, hash };
    const running = bcryptWorker();
    running.ref();
    running.postMessage(request);
  });
}

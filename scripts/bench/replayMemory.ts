// Memory of the webhook replay guard when full: the heap it holds with MAX_REMEMBERED_MESSAGE_IDS
// message ids shaped as Svix's (msg_ + 27 base62 characters), measured after garbage collection
// against the same process before filling it. Run: npm run build && node --expose-gc
// scripts/bench/replayMemory.ts
import { randomBytes } from 'node:crypto';
import { loadBuilt } from './built.ts';
import type * as ReplayGuardModule from '../../src/webhooks/replayGuard.ts';

const { ReplayGuard, MAX_REMEMBERED_MESSAGE_IDS } =
  await loadBuilt<typeof ReplayGuardModule>('webhooks/replayGuard.js');
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RUNS = 5;

function svixId(): string {
  const bytes = randomBytes(27);
  return `msg_${Array.from(bytes, (byte) => BASE62[byte % 62]).join('')}`;
}

function heapUsed(): number {
  if (globalThis.gc === undefined) throw new Error('run with node --expose-gc');
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().heapUsed;
}

const figures: number[] = [];
// Each run's guard is kept until the end, so that no collection during a run frees an earlier one.
const kept: unknown[] = [];
for (let run = 0; run < RUNS; run++) {
  const before = heapUsed();
  const guard = new ReplayGuard();
  kept.push(guard);
  const now = Date.now() / 1000;
  for (let index = 0; index < MAX_REMEMBERED_MESSAGE_IDS; index++) guard.remember(svixId(), now);
  const after = heapUsed();
  if (guard.size !== MAX_REMEMBERED_MESSAGE_IDS) throw new Error(`held ${guard.size} ids`);
  figures.push(after - before);
}
figures.sort((a, b) => a - b);
const median = figures[Math.floor(RUNS / 2)] ?? 0;
kept.length = 0;
console.log(
  `replay guard with ${MAX_REMEMBERED_MESSAGE_IDS.toLocaleString('en')} ids: median ` +
    `${(median / 1024 / 1024).toFixed(1)} MiB of heap (${Math.round(median / MAX_REMEMBERED_MESSAGE_IDS)} ` +
    `bytes an id), runs ${figures.map((figure) => (figure / 1024 / 1024).toFixed(1)).join(', ')} MiB`,
);

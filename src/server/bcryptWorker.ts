// The body of the bcrypt worker thread (bcryptThread.ts starts it): bcryptjs is pure JavaScript, so
// a comparison run here takes a CPU of its own instead of the event loop that serves the scrapes.
import { parentPort } from 'node:worker_threads';
import bcrypt from 'bcryptjs';
import type { BcryptRequest, BcryptAnswer } from './bcryptThread.js';

parentPort?.on('message', ({ id, password, hash }: BcryptRequest) => {
  let matches = false;
  try {
    matches = bcrypt.compareSync(password, hash);
  } catch {
    // A hash bcryptjs cannot read matches no password, as on the event loop.
  }
  const answer: BcryptAnswer = { id, matches };
  parentPort?.postMessage(answer);
});

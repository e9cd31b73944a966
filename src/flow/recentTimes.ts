// Times a ledger remembers per pull request for a while, kept bounded: an age and a cap.
import { orShared } from '../snapshot/noEntries.js';

/** The entries of `times` at or after `notBefore`, at most `max` of them, the latest (`times` is pruned in place). */
export function latestSince<K>(
  times: Map<K, number>,
  notBefore: number,
  max: number,
): ReadonlyMap<K, number> {
  for (const [key, at] of times) if (at < notBefore) times.delete(key);
  if (times.size <= max) return orShared(times);
  const latest = [...times].sort(([, a], [, b]) => b - a);
  return new Map(latest.slice(0, max));
}

/**
 * Entries dated after `latestPlausible` a ledger keeps at most: each stays until its date, so a
 * stream of rows dated years ahead, each new, would grow the ledger without end. Past the bound the
 * farthest go (such a row may then count again, and is reported again as dated ahead).
 */
export const MAX_REMEMBERED_AHEAD = 1000;

/** Drops from `times` the entries dated after `latestPlausible` beyond the MAX_REMEMBERED_AHEAD nearest. */
export function forgetFarAhead<K>(times: Map<K, number>, latestPlausible: number): void {
  const ahead: [K, number][] = [];
  for (const entry of times) if (entry[1] > latestPlausible) ahead.push(entry);
  if (ahead.length <= MAX_REMEMBERED_AHEAD) return;
  ahead.sort(([, a], [, b]) => a - b);
  for (const [key] of ahead.slice(MAX_REMEMBERED_AHEAD)) times.delete(key);
}

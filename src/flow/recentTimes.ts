// Times a ledger remembers per pull request for a while, kept bounded: an age and a cap.

/** The entries of `times` at or after `notBefore`, at most `max` of them, the latest (`times` is pruned in place). */
export function latestSince<K>(
  times: Map<K, number>,
  notBefore: number,
  max: number,
): ReadonlyMap<K, number> {
  for (const [key, at] of times) if (at < notBefore) times.delete(key);
  if (times.size <= max) return times;
  const latest = [...times].sort(([, a], [, b]) => b - a);
  return new Map(latest.slice(0, max));
}

// Which targets one instance of a sharded deployment polls. Each target goes to exactly one shard,
// FNV-1a 64 of a stable key modulo the shard count (as kube-state-metrics assigns objects), so the
// shards together poll every target once and need not talk to each other.
import type { Target } from '../snapshot/types.js';
import { fnv1a64 } from './fnv1a.js';

/** This instance's place among `totalShards` instances; `{ shard: 0, totalShards: 1 }` is unsharded. */
export interface Sharding {
  readonly shard: number;
  readonly totalShards: number;
}

/** The unsharded setting: one instance polls everything. */
export const UNSHARDED: Sharding = { shard: 0, totalShards: 1 };

/**
 * The string a target is hashed by: `host/owner/name:branch` for a merge queue (git forbids `:` in
 * branch names, so the key is unambiguous) and `host/owner/name` for a quarantine list.
 */
export function shardKey(target: Target): string {
  return target.kind === 'merge_queue' ? `${target.repo}:${target.branch}` : target.repo;
}

/** The shard (0..totalShards-1) that polls `target`. */
export function shardOf(target: Target, totalShards: number): number {
  return Number(fnv1a64(shardKey(target)) % BigInt(totalShards));
}

/** Whether the instance described by `sharding` polls `target`. */
export function isAssignedToShard(target: Target, sharding: Sharding): boolean {
  return sharding.totalShards <= 1 || shardOf(target, sharding.totalShards) === sharding.shard;
}

/** The problem with a shard setting, or undefined when `0 <= shard < totalShards` (whole numbers). */
export function shardingProblem(sharding: Sharding): string | undefined {
  const { shard, totalShards } = sharding;
  if (!Number.isInteger(totalShards) || totalShards < 1) {
    return `total shards must be a whole number of at least 1, got ${totalShards}`;
  }
  if (!Number.isInteger(shard) || shard < 0 || shard >= totalShards) {
    return `shard must be a whole number from 0 to ${totalShards - 1} (total shards ${totalShards}), got ${shard}`;
  }
  return undefined;
}

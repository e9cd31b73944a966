// FNV-1a 64 against published test vectors, and the shard assignment built on it: stable keys,
// every target on exactly one shard, and clear messages for impossible settings.
import { describe, expect, it } from 'vitest';
import { fnv1a64 } from '../../src/sharding/fnv1a.js';
import {
  isAssignedToShard,
  shardKey,
  shardOf,
  shardingProblem,
} from '../../src/sharding/shardAssignment.js';
import type { Target } from '../../src/snapshot/types.js';

describe('fnv1a64', () => {
  it('matches the reference vectors (Go hash/fnv New64a)', () => {
    expect(fnv1a64('')).toBe(0xcbf29ce484222325n);
    expect(fnv1a64('a')).toBe(0xaf63dc4c8601ec8cn);
    expect(fnv1a64('foobar')).toBe(0x85944171f73967e8n);
  });

  it('hashes the UTF-8 bytes, not UTF-16 code units', () => {
    // "é" is the bytes c3 a9 in UTF-8; hashing its one UTF-16 unit (e9) would give 0xaf64644c8602d3a4.
    expect(fnv1a64('é')).toBe(0x0ac21707b7181e01n);
  });
});

const queue = (repo: string, branch: string): Target => ({ kind: 'merge_queue', repo, branch });
const flaky = (repo: string): Target => ({ kind: 'flaky_tests', repo, branch: '' });

describe('shard assignment', () => {
  it('hashes host/owner/name:branch for a queue and host/owner/name for a quarantine list', () => {
    expect(shardKey(queue('github.com/acme/web', 'main'))).toBe('github.com/acme/web:main');
    expect(shardKey(flaky('github.com/acme/web'))).toBe('github.com/acme/web');
    // Pinned (computed independently): a change of key or hash would move targets between shards
    // on upgrade, so it must be deliberate.
    expect(fnv1a64('github.com/acme/web:main')).toBe(0x71f7105e42556320n);
    const shards = (target: Target) => [1, 2, 3, 5].map((m) => shardOf(target, m));
    expect(shards(queue('github.com/acme/web', 'main'))).toEqual([0, 0, 2, 2]);
    expect(shards(flaky('github.com/acme/web'))).toEqual([0, 1, 2, 4]);
  });

  it('puts every target on exactly one shard, spread over all shards', () => {
    const targets = Array.from({ length: 300 }, (_, index) =>
      index % 3 === 0
        ? flaky(`github.com/org${index}/repo`)
        : queue(`github.com/org${index}/repo`, index % 2 === 0 ? 'main' : 'release'),
    );
    for (const totalShards of [1, 2, 3, 5, 8]) {
      const perShard = new Array<number>(totalShards).fill(0);
      for (const target of targets) {
        const owners = Array.from({ length: totalShards }, (_, shard) => shard).filter((shard) =>
          isAssignedToShard(target, { shard, totalShards }),
        );
        expect(owners).toHaveLength(1);
        perShard[owners[0] ?? 0] = (perShard[owners[0] ?? 0] ?? 0) + 1;
      }
      // Roughly even: no shard gets less than half its fair share.
      for (const count of perShard) expect(count).toBeGreaterThan(300 / totalShards / 2);
    }
  });

  it('names the problem with an impossible setting', () => {
    expect(shardingProblem({ shard: 0, totalShards: 1 })).toBeUndefined();
    expect(shardingProblem({ shard: 4, totalShards: 5 })).toBeUndefined();
    expect(shardingProblem({ shard: 3, totalShards: 3 })).toBe(
      'shard must be a whole number from 0 to 2 (total shards 3), got 3',
    );
    expect(shardingProblem({ shard: 0, totalShards: 0 })).toBe(
      'total shards must be a whole number of at least 1, got 0',
    );
  });
});

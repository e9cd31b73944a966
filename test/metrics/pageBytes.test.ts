// Gzip members as the page sends them: whatever mix of members a page holds, a gzip reader must
// read back exactly the text, as Prometheus's reader takes a stream of members as one text. And the
// blocks a page is written from: joined again only where a target's piece changed.
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  gzipMember,
  joinBlocks,
  prepareFamilies,
  renderTarget,
  storedGzipMember,
  TARGETS_PER_BLOCK,
  writePage,
} from '../../src/metrics/pageBytes.js';
import type { AcrossTargetsBytes, TargetBytes } from '../../src/metrics/pageBytes.js';
import { NO_ENTRIES } from '../../src/snapshot/noEntries.js';
import { loadScenario, replayScenario } from './scenario.js';

const LINE = 'trunk_exporter_api_requests_total{endpoint="getQueue",status="200"} 12\n';

describe('storedGzipMember', () => {
  it.each([
    ['empty', ''],
    ['one line', LINE],
    ['non-ASCII text', '# HELP x Zürich ✓\n'],
    ['exactly one full stored block', 'a'.repeat(0xffff)],
    ['more than one stored block', LINE.repeat(2_000)],
  ])('reads back as the text: %s', (_name, text) => {
    expect(gunzipSync(storedGzipMember(text)).toString()).toBe(text);
  });

  it('is the text and a fixed overhead: 18 bytes of header and trailer, 5 per 65,535-byte block', () => {
    const text = LINE.repeat(2_000);
    const bytes = Buffer.byteLength(text);
    expect(storedGzipMember(text).length).toBe(18 + 5 * Math.ceil(bytes / 0xffff) + bytes);
  });

  it('reads back as one text among compressed members', () => {
    const page = Buffer.concat([
      gzipMember('# TYPE a gauge\n'),
      storedGzipMember(LINE),
      gzipMember('# EOF\n'),
    ]);
    expect(gunzipSync(page).toString()).toBe(`# TYPE a gauge\n${LINE}# EOF\n`);
  });
});

/** A target whose per-target families' pieces are `pieces`, in family order. */
function target(...pieces: string[]): TargetBytes {
  const bounds = new Int32Array(pieces.length * 2);
  let length = 0;
  pieces.forEach((piece, index) => {
    bounds[index * 2] = length;
    length += Buffer.byteLength(piece);
    bounds[index * 2 + 1] = length;
  });
  return { bytes: Buffer.from(pieces.join('')), bounds, failed: new Map() };
}

/** `count` targets, each with a piece of two families naming it. */
function targets(count: number, from = 0): TargetBytes[] {
  return Array.from({ length: count }, (_unused, index) =>
    target(`a${String(from + index)};`, `b${String(from + index)};`),
  );
}

/** Each family's chunks of every block, as text. */
function columns(blocks: ReturnType<typeof joinBlocks>): string[] {
  return [0, 1].map((index) => blocks.map(({ chunks }) => chunks[index]?.toString()).join(''));
}

describe('joinBlocks', () => {
  const count = TARGETS_PER_BLOCK * 2 + 5;

  it("joins each family's pieces in target order, block after block", () => {
    const blocks = joinBlocks([], targets(count));
    expect(blocks.map(({ members }) => members.length)).toEqual([
      TARGETS_PER_BLOCK,
      TARGETS_PER_BLOCK,
      5,
    ]);
    const all = targets(count);
    expect(columns(blocks)).toEqual([
      all.map((_unused, index) => `a${String(index)};`).join(''),
      all.map((_unused, index) => `b${String(index)};`).join(''),
    ]);
  });

  it('keeps a block whose members are the same, and in a changed block the families that did not change', () => {
    const before = targets(count);
    const first = joinBlocks([], before);
    const after = [...before];
    // A new target object (a poll) with the same first family and a new second one.
    after[TARGETS_PER_BLOCK + 3] = target(`a${String(TARGETS_PER_BLOCK + 3)};`, 'changed;');
    const second = joinBlocks(first, after);

    expect(second[0]).toBe(first[0]);
    expect(second[2]).toBe(first[2]);
    expect(second[1]).not.toBe(first[1]);
    expect(second[1]?.chunks[0]).toBe(first[1]?.chunks[0]);
    expect(second[1]?.chunks[1]).not.toBe(first[1]?.chunks[1]);
    expect(columns(second)).toEqual(columns(joinBlocks([], after)));
  });

  it("keeps each target's pieces once, in its block, and joins again from the blocks after a change and a shift", () => {
    const before = targets(count);
    const first = joinBlocks([], before);
    // Held by the blocks alone: a target's own bytes are let go once joined.
    expect(before.filter((member) => member.bytes !== undefined)).toHaveLength(0);

    // Target 1 leaves (every later target moves up one place) and target 40 changes its second piece.
    const changed = target('a40;', 'changed;');
    const after = before
      .filter((_unused, index) => index !== 1)
      .map((member, index) => (index === 39 ? changed : member));
    const second = joinBlocks(first, after);
    const kept = Array.from({ length: count }, (_unused, index) => index).filter((n) => n !== 1);
    expect(columns(second)).toEqual([
      kept.map((n) => `a${String(n)};`).join(''),
      kept.map((n) => (n === 40 ? 'changed;' : `b${String(n)};`)).join(''),
    ]);
    expect(after.filter((member) => member.bytes !== undefined)).toHaveLength(0);
  });

  it('joins again what a removed target shifts', () => {
    const before = targets(count);
    const first = joinBlocks([], before);
    const after = before.filter((_unused, index) => index !== 1);
    expect(columns(joinBlocks(first, after))).toEqual(columns(joinBlocks([], after)));
  });
});

describe('writePage', () => {
  it('encodes a family across targets again only when its text changes', () => {
    const replay = replayScenario(loadScenario('normal-queue'));
    const encoded: string[] = [];
    const families = prepareFamilies(replay.snapshotMetrics.selected, 'prometheus', (text) => {
      encoded.push(text);
      return Buffer.from(text);
    });
    const statuses = replay.store.statuses();
    const targets = statuses.map((status) =>
      renderTarget(families, status, replay.snapshotMetrics.settings),
    );
    // No family threw: each target holds the shared empty map of failures.
    expect(targets.length).toBeGreaterThan(0);
    for (const { failed } of targets) expect(failed).toBe(NO_ENTRIES);
    const blocks = joinBlocks([], targets);
    const acrossTargets: AcrossTargetsBytes = new Map();
    const write = () =>
      Buffer.concat(
        writePage(families, statuses, blocks, acrossTargets, replay.snapshotMetrics).chunks,
      );

    encoded.length = 0;
    const first = write();
    // Each family across targets that has samples here (no test collections in this scenario).
    const acrossFamilies = families.filter(
      ({ definition }) =>
        definition.scope === 'targets' && first.includes(`# TYPE ${definition.name} `),
    );
    expect(acrossFamilies.length).toBeGreaterThan(0);
    expect(encoded.length).toBe(acrossFamilies.length);
    encoded.length = 0;
    const second = write();
    expect(encoded).toEqual([]);
    expect(second.equals(first)).toBe(true);
    expect(first.toString()).toContain('trunk_exporter_build_info');
  });
});

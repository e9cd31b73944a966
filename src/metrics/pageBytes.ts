import { crc32, gzipSync } from 'node:zlib';
import { orShared } from '../snapshot/noEntries.js';
import type { TargetStatus } from '../snapshot/types.js';
import type { ExpositionFormat } from './exposition.js';
import type { FamilyDefinition, FamilySettings } from './family.js';
import { familyText } from './familyText.js';
import type { FamilyText } from './familyText.js';
import type { SelectedFamily, SnapshotFamilies } from './snapshotFamilies.js';

// The bytes of /metrics: each target's piece of each per-target family rendered on its own, joined
// in blocks of consecutive targets (which then hold the only copy), and a page laid out from the
// blocks family by family. A gzip piece is a gzip member of its own: members may follow one
// another in one stream (RFC 1952), which Prometheus's and Node.js's readers take as one text, so
// a page written after a poll concatenates members instead of compressing the whole page again.

/** A selected family prepared for one variant. */
export interface PreparedFamily {
  readonly definition: FamilyDefinition;
  readonly text: FamilyText;
  /** The header, encoded. */
  readonly header: Buffer;
  /** Plain text or a gzip member, as the variant sends. */
  readonly encode: (text: string) => Buffer;
  /** For a per-target family, its place in TargetBytes.bounds. */
  readonly perTargetIndex: number | undefined;
}

/** One target's samples of every per-target family, in one variant. */
export interface TargetBytes {
  /**
   * Each family's piece, back to back, as rendered; let go once a block holds the pieces (`home`),
   * so that the page's bytes are kept once, not once per target and once per block.
   */
  bytes?: Buffer | undefined;
  /** Where the pieces are once joined: the block's chunks, and where in each its piece starts. */
  home?: { readonly chunks: readonly Buffer[]; readonly starts: Int32Array } | undefined;
  /**
   * [start, end) of each per-target family's piece in `bytes`, in family order; the lengths also
   * place the pieces in `home`.
   */
  readonly bounds: Int32Array;
  /**
   * Per-target families that threw, by index, with what they threw: the page leaves them out, and
   * the next scrape renders the target again.
   */
  readonly failed: ReadonlyMap<number, unknown>;
}

/** The selected families prepared for one format and encoding. */
export function prepareFamilies(
  selected: readonly SelectedFamily[],
  format: ExpositionFormat,
  encode: (text: string) => Buffer,
): readonly PreparedFamily[] {
  let perTarget = 0;
  return selected.map(({ definition, help }) => {
    const text = familyText(definition, help, format);
    return {
      definition,
      text,
      header: encode(text.header),
      encode,
      perTargetIndex: definition.scope === 'target' ? perTarget++ : undefined,
    };
  });
}

/** One target's pieces of every per-target family, each encoded on its own. */
export function renderTarget(
  families: readonly PreparedFamily[],
  status: TargetStatus,
  settings: FamilySettings,
): TargetBytes {
  const perTarget = families.filter(({ perTargetIndex }) => perTargetIndex !== undefined);
  const bounds = new Int32Array(perTarget.length * 2);
  const pieces: Buffer[] = [];
  const failed = new Map<number, unknown>();
  let length = 0;
  perTarget.forEach(({ definition, text, encode }, index) => {
    bounds[index * 2] = length;
    try {
      if (definition.scope !== 'target') throw new Error(`${definition.name} is not per target`);
      const samples = text.render(definition.samples(status, settings));
      if (samples !== '') {
        const encoded = encode(samples);
        pieces.push(encoded);
        length += encoded.length;
      }
    } catch (error) {
      failed.set(index, error);
    }
    bounds[index * 2 + 1] = length;
  });
  // Memory of its own: a slice of Node.js's shared pool would keep the pool alive with it.
  const bytes = Buffer.allocUnsafeSlow(length);
  let offset = 0;
  for (const encoded of pieces) offset += encoded.copy(bytes, offset);
  return { bytes, bounds, failed: orShared(failed) };
}

/**
 * Consecutive targets' pieces joined family by family, so that a page is written from a few
 * hundred chunks rather than one piece per target and family (a copy each).
 */
export const TARGETS_PER_BLOCK = 32;

/** Up to TARGETS_PER_BLOCK consecutive targets, and each per-target family's pieces of them joined. */
export interface TargetBlock {
  readonly members: readonly TargetBytes[];
  /** By per-target family index: the members' pieces of that family, back to back. */
  readonly chunks: readonly Buffer[];
}

/**
 * The blocks of `targets`, reusing what `previous` joined: a block whose members are the same is
 * kept whole, and a changed block joins again only the families whose pieces changed.
 */
export function joinBlocks(
  previous: readonly TargetBlock[],
  targets: readonly TargetBytes[],
): TargetBlock[] {
  const perTargetFamilies = (targets[0]?.bounds.length ?? 0) / 2;
  const blocks: TargetBlock[] = [];
  for (let start = 0; start < targets.length; start += TARGETS_PER_BLOCK) {
    const members = targets.slice(start, start + TARGETS_PER_BLOCK);
    const old = previous[blocks.length];
    if (old !== undefined && sameMembers(old.members, members)) {
      blocks.push(old);
      continue;
    }
    const chunks: Buffer[] = [];
    for (let index = 0; index < perTargetFamilies; index++) {
      const kept = old !== undefined && samePieces(old.members, members, index);
      chunks.push((kept ? old.chunks[index] : undefined) ?? joinPieces(members, index));
    }
    moveInto(chunks, members, perTargetFamilies);
    blocks.push({ members, chunks });
  }
  return blocks;
}

/** Makes `chunks` the home of the members' pieces, and lets go of their own bytes. */
function moveInto(
  chunks: readonly Buffer[],
  members: readonly TargetBytes[],
  families: number,
): void {
  const offsets = new Int32Array(families);
  for (const member of members) {
    const starts = offsets.slice();
    for (let index = 0; index < families; index++) {
      offsets[index] = (offsets[index] ?? 0) + pieceLength(member, index);
    }
    member.home = { chunks, starts };
    member.bytes = undefined;
  }
}

/**
 * Each family across targets as last encoded, by name: encoded again only when its text changed,
 * since most pages change a few targets and leave these (a handful of lines) as they were.
 */
export type AcrossTargetsBytes = Map<string, { readonly text: string; readonly bytes: Buffer }>;

/** A page as the chunks it is sent in, in order, and their total length. */
export interface WrittenPage {
  readonly chunks: readonly Buffer[];
  readonly length: number;
  readonly complete: boolean;
}

/**
 * Lays out every family: its header, then its samples (every block's chunk of a per-target
 * family). The chunks are sent as they are, not copied into one buffer, which would be a second
 * copy of the page's bytes beside the blocks'. A family without samples is left out, header
 * included; a family that threw is left out and counted once, and the page is then not `complete`.
 */
export function writePage(
  families: readonly PreparedFamily[],
  statuses: readonly TargetStatus[],
  blocks: readonly TargetBlock[],
  acrossTargets: AcrossTargetsBytes,
  { settings, renderErrors }: Pick<SnapshotFamilies, 'settings' | 'renderErrors'>,
): WrittenPage {
  const layout: Buffer[] = [];
  let length = 0;
  let complete = true;
  const failures = failuresByFamily(blocks);
  for (const { definition, text, header, perTargetIndex, encode } of families) {
    if (definition.scope === 'targets') {
      try {
        const samples = text.render(definition.samples(statuses, settings));
        if (samples === '') continue;
        let encoded = acrossTargets.get(definition.name);
        if (encoded?.text !== samples) {
          encoded = { text: samples, bytes: encode(text.header + samples) };
          acrossTargets.set(definition.name, encoded);
        }
        layout.push(encoded.bytes);
        length += encoded.bytes.length;
      } catch (error) {
        renderErrors?.record(definition.name, error);
        complete = false;
      }
      continue;
    }
    const index = perTargetIndex ?? 0;
    if (failures.has(index)) {
      // Counted once per page, as a family across targets is.
      renderErrors?.record(definition.name, failures.get(index));
      complete = false;
      continue;
    }
    let samples = 0;
    for (const { chunks } of blocks) samples += chunks[index]?.length ?? 0;
    if (samples === 0) continue;
    layout.push(header);
    for (const { chunks } of blocks) {
      const chunk = chunks[index];
      if (chunk !== undefined && chunk.length > 0) layout.push(chunk);
    }
    length += header.length + samples;
  }
  return { chunks: layout, length, complete };
}

/** By per-target family index, what the first target whose piece of it threw threw. */
function failuresByFamily(blocks: readonly TargetBlock[]): Map<number, unknown> {
  const failures = new Map<number, unknown>();
  for (const { members } of blocks) {
    for (const { failed } of members) {
      for (const [index, error] of failed) if (!failures.has(index)) failures.set(index, error);
    }
  }
  return failures;
}

function sameMembers(a: readonly TargetBytes[], b: readonly TargetBytes[]): boolean {
  return a.length === b.length && a.every((member, index) => member === b[index]);
}

/** Whether two lists of targets hold the same bytes of per-target family `index`. */
function samePieces(a: readonly TargetBytes[], b: readonly TargetBytes[], index: number): boolean {
  if (a.length !== b.length) return false;
  return a.every((before, at) => {
    const after = b[at];
    if (after === undefined) return false;
    return before === after || pieceOf(after, index).equals(pieceOf(before, index));
  });
}

/** The members' pieces of per-target family `index`, back to back. */
function joinPieces(members: readonly TargetBytes[], index: number): Buffer {
  let length = 0;
  for (const member of members) length += pieceLength(member, index);
  // Memory of its own: a slice of Node.js's shared pool would keep the pool alive with it.
  const chunk = Buffer.allocUnsafeSlow(length);
  let offset = 0;
  for (const member of members) offset += pieceOf(member, index).copy(chunk, offset);
  return chunk;
}

function pieceLength({ bounds }: TargetBytes, index: number): number {
  return piece(bounds, index, 1) - piece(bounds, index, 0);
}

/** A target's piece of per-target family `index`: in its own bytes, or in its block's chunk. */
function pieceOf(target: TargetBytes, index: number): Buffer {
  const length = pieceLength(target, index);
  if (target.bytes !== undefined) {
    const start = piece(target.bounds, index, 0);
    return target.bytes.subarray(start, start + length);
  }
  const chunk = target.home?.chunks[index];
  const start = target.home?.starts[index] ?? 0;
  if (chunk === undefined) throw new Error(`a target's piece of family ${String(index)} is gone`);
  return chunk.subarray(start, start + length);
}

/**
 * `text` as a gzip member, with a window, hash and output buffer no larger than the text needs:
 * most pieces are a few hundred bytes, and zlib's defaults would allocate (and clear) about 256 KB
 * for each, and a 16 KB buffer for its output.
 */
export function gzipMember(text: string): Buffer {
  const windowBits = Math.min(15, Math.max(9, Math.ceil(Math.log2(text.length + 262))));
  return gzipSync(text, {
    windowBits,
    memLevel: Math.max(1, windowBits - 7),
    chunkSize: Math.min(16 * 1024, Math.max(256, text.length >> 2)),
  });
}

/** Most bytes a stored deflate block holds. */
const STORED_BLOCK_BYTES = 0xffff;

/**
 * `text` as a gzip member of stored (uncompressed) deflate blocks, for the exporter's own metrics:
 * a few kilobytes rendered again on most scrapes, where setting up a deflate stream costs several
 * times what the kilobytes it saves cost to send.
 */
export function storedGzipMember(text: string): Buffer {
  const data = Buffer.from(text);
  const blocks = Math.max(1, Math.ceil(data.length / STORED_BLOCK_BYTES));
  const member = Buffer.allocUnsafe(10 + blocks * 5 + data.length + 8);
  // ID1 ID2, CM = deflate, no flags, no mtime, no extra flags, OS unknown (RFC 1952).
  member.set([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
  let offset = 10;
  for (let block = 0; block < blocks; block++) {
    const start = block * STORED_BLOCK_BYTES;
    const length = Math.min(STORED_BLOCK_BYTES, data.length - start);
    // BFINAL on the last block, BTYPE 00 (stored), then LEN and its one's complement (RFC 1951).
    member.writeUInt8(block === blocks - 1 ? 1 : 0, offset);
    member.writeUInt16LE(length, offset + 1);
    member.writeUInt16LE(~length & 0xffff, offset + 3);
    offset += 5 + data.copy(member, offset + 5, start, start + length);
  }
  member.writeUInt32LE(crc32(data), offset);
  member.writeUInt32LE(data.length % 2 ** 32, offset + 4);
  return member;
}

/** Where a per-target family's piece starts (edge 0) or ends (edge 1). */
function piece(bounds: Int32Array, index: number, edge: 0 | 1): number {
  return bounds[index * 2 + edge] ?? 0;
}

import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';

// A rendered part of /metrics, and when its memory may be given back.
//
// A render replaces the part before it, but the old part's buffers stay in memory until V8 finds
// their handles dead, and those handles live in the old generation: only a full collection frees
// them, which V8's memory reducer runs seconds later. With 1,000 targets the snapshot part is a
// 16 MB buffer, so every render left a second page resident for 3-8 s (docs/benchmarks.md,
// Memory). A replaced part is therefore released as soon as nothing reads it: each response written
// from it holds it until the socket has taken the last byte ('finish'), and its gzip holds it while
// compressing. Releasing detaches the buffers (ArrayBuffer.prototype.transfer), which frees their
// memory at once; anything still pointing at them sees an empty buffer, never freed memory, which
// is why a hold must cover every native read (a socket write, zlib) of the bytes.
// A response that never finishes (its client went away) keeps its hold: the part is then left to
// the garbage collector, as every part was before.

const gzip = promisify(gzipCallback);

export class PagePart {
  readonly text: Buffer;
  /** Whether `text` is a view on memory no other buffer shares (a PageWriter's page). */
  readonly #ownsMemory: boolean;
  #gzipped: Promise<Buffer> | undefined;
  #gzippedBytes: Buffer | undefined;
  /** Responses and compressions still reading the part. */
  #readers = 0;
  /** Set once a newer part has replaced this one: no new reader can come. */
  #retired = false;

  constructor(text: Buffer, { ownsMemory = false }: { ownsMemory?: boolean } = {}) {
    this.text = text;
    this.#ownsMemory = ownsMemory;
  }

  /** The gzip member once gzipped() has resolved, for the synchronous path. */
  get gzippedBytes(): Buffer | undefined {
    return this.#gzippedBytes;
  }

  /** The part's gzip member, compressed once, off the event loop. */
  gzipped(): Promise<Buffer> {
    if (this.#gzipped === undefined) {
      this.hold();
      this.#gzipped = gzip(this.text).then(
        (bytes) => {
          this.#gzippedBytes = bytes;
          this.release();
          return bytes;
        },
        (error: unknown) => {
          this.release();
          throw error;
        },
      );
    }
    return this.#gzipped;
  }

  /** Keeps the part's buffers until a matching release(). */
  hold(): void {
    this.#readers++;
  }

  release(): void {
    this.#readers--;
    this.#freeIfUnread();
  }

  /** Called when a newer part has replaced this one; frees it once its last reader is done. */
  retire(): void {
    this.#retired = true;
    this.#freeIfUnread();
  }

  /** Whether the part is retired and unread: its buffers are freed, unless they are pooled; for tests. */
  get released(): boolean {
    return this.#retired && this.#readers <= 0;
  }

  #freeIfUnread(): void {
    if (!this.#retired || this.#readers > 0) return;
    detach(this.text, this.#ownsMemory);
    if (this.#gzippedBytes !== undefined) detach(this.#gzippedBytes, false);
  }
}

/**
 * Frees a buffer's memory now, if nothing else can be using it: the buffer is said to own it, or
 * spans all of it. Small buffers are slices of a pool that Node.js shares between them, and
 * freeing one would empty the others.
 */
function detach(buffer: Buffer, ownsMemory: boolean): void {
  const memory = buffer.buffer;
  if (!(memory instanceof ArrayBuffer) || memory.detached) return;
  const spansAll = buffer.byteOffset === 0 && buffer.byteLength === memory.byteLength;
  if (!ownsMemory && !spansAll) return;
  memory.transfer(0);
}

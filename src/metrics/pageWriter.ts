/** The smallest reservation: a first render starts here and doubles its way up to the page. */
const MIN_CAPACITY = 64 * 1024;

/**
 * Bytes written one after another into memory of their own, which grows when a write needs more.
 * Memory never written is never touched, so capacity reserved beyond what a page turns out to need
 * costs address space, not resident memory.
 */
export class PageWriter {
  #buffer: Buffer<ArrayBuffer>;
  #length = 0;

  constructor(expectedBytes: number) {
    // Slow: a buffer of its own, never a slice of the pool (see finish()).
    this.#buffer = Buffer.allocUnsafeSlow(Math.max(expectedBytes, MIN_CAPACITY));
  }

  /** Bytes written so far. */
  get length(): number {
    return this.#length;
  }

  write(text: string): void {
    // Buffer#write stops where the buffer ends; a UTF-16 code unit is at most 3 bytes of UTF-8, so
    // the exact length is measured only when the text might not fit.
    if (this.#buffer.length - this.#length < text.length * 3) {
      this.#reserve(Buffer.byteLength(text));
    }
    this.#length += this.#buffer.write(text, this.#length);
  }

  /** Appends `source[start, end)`. */
  copy(source: Buffer, start: number, end: number): void {
    this.#reserve(end - start);
    this.#length += source.copy(this.#buffer, this.#length, start, end);
  }

  /** Forgets everything written after the first `length` bytes. */
  truncate(length: number): void {
    this.#length = length;
  }

  /**
   * The bytes written: a view on memory that no other buffer shares, so its owner may free it
   * whole (PagePart). The writer must not be used afterwards.
   */
  finish(): Buffer {
    return this.#buffer.subarray(0, this.#length);
  }

  #reserve(bytes: number): void {
    if (this.#length + bytes <= this.#buffer.length) return;
    const bigger = Buffer.allocUnsafeSlow(Math.max(this.#buffer.length * 2, this.#length + bytes));
    this.#buffer.copy(bigger, 0, 0, this.#length);
    // Freed now rather than at the GC: a first render doubles its way up to the whole page.
    this.#buffer.buffer.transfer(0);
    this.#buffer = bigger;
  }
}

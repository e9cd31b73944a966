import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate, type ZlibOptions } from 'node:zlib';

// A webhook is signed over its JSON as sent before any Content-Encoding: a compressing proxy or
// sender changes the bytes on the wire, not what was signed, so the body is decoded before it is
// verified.

type Decoder = (body: Buffer, options: ZlibOptions) => Promise<Buffer>;

const DECODERS: ReadonlyMap<string, Decoder> = new Map([
  ['gzip', promisify<Buffer, ZlibOptions, Buffer>(gunzip)],
  ['x-gzip', promisify<Buffer, ZlibOptions, Buffer>(gunzip)],
  ['deflate', promisify<Buffer, ZlibOptions, Buffer>(inflate)],
  ['br', promisify<Buffer, ZlibOptions, Buffer>(brotliDecompress)],
]);

/**
 * How many times its encoded size a body may grow when decoded, past DECODED_FLOOR_BYTES. JSON
 * compresses a few times over; a made-up gzip of a megabyte of spaces is a thousandth of it, and
 * would buy a sender without the secret a megabyte of inflating and HMAC for each kilobyte sent.
 */
const MAX_DECODED_RATIO = 32;
/** A body may always decode to this many bytes, however small it was encoded. */
const DECODED_FLOOR_BYTES = 64 * 1024;

/** The most bytes a body of `encodedBytes` may decode to, within `maxBytes`. */
function decodedBodyLimit(encodedBytes: number, maxBytes: number): number {
  return Math.min(maxBytes, Math.max(DECODED_FLOOR_BYTES, encodedBytes * MAX_DECODED_RATIO));
}

/**
 * The codings a Content-Encoding header lists, in the order they were applied and without
 * `identity`; undefined when one of them is not decoded here (the answer is then 415).
 */
export function contentCodings(header: string | undefined): readonly string[] | undefined {
  if (header === undefined) return [];
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  return codings.every((coding) => DECODERS.has(coding)) ? codings : undefined;
}

/** Why decodeContent refused a body. */
export class UndecodableBody extends Error {
  constructor(
    message: string,
    /** The decoded body would be larger than allowed, rather than not decodable at all. */
    readonly tooLarge: boolean,
  ) {
    super(message);
    this.name = 'UndecodableBody';
  }
}

/**
 * `body` with `codings` undone, the last applied first, never growing past decodedBodyLimit of
 * its size and `maxBytes` (a small gzip can inflate to gigabytes): rejects with UndecodableBody
 * when a coding does not decode or the result would be larger.
 */
export async function decodeContent(
  body: Buffer,
  codings: readonly string[],
  maxBytes: number,
): Promise<Buffer> {
  const limit = decodedBodyLimit(body.length, maxBytes);
  let decoded = body;
  for (const coding of [...codings].reverse()) {
    const decode = DECODERS.get(coding);
    if (decode === undefined) throw new UndecodableBody(`unsupported coding ${coding}`, false);
    try {
      decoded = await decode(decoded, { maxOutputLength: limit });
    } catch (error) {
      const tooLarge = error instanceof RangeError;
      throw new UndecodableBody(
        tooLarge
          ? `body larger than ${maxBytes} bytes once decoded`
          : `body is not valid ${coding}`,
        tooLarge,
      );
    }
  }
  return decoded;
}

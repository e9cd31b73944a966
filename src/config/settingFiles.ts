import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import type { ConfigProblem } from './problems.js';
import { Secret } from '../secrets/secret.js';
import type { ServerTls } from './types.js';

/** Largest file a setting (`trunk.tokenFile`, the TLS files) may name: a token or a PEM chain. */
export const MAX_SETTING_FILE_BYTES = 64 * 1024;
/** Longest a file named in the configuration, or the configuration itself, may take to read. */
export const FILE_READ_TIMEOUT_MS = 5000;

/** A file's text, or the problem to report at the setting that named it. */
export type SettingFile = { readonly text: string } | { readonly problem: ConfigProblem };

/** Reads a file named by the setting at `settingPath` (`trunk.tokenFile`…). */
export async function readSettingFile(file: string, settingPath: string): Promise<SettingFile> {
  const read = await readRegularFile(file, MAX_SETTING_FILE_BYTES);
  if ('text' in read) return read;
  return { problem: { path: settingPath, message: `cannot read ${file}: ${read.reason}` } };
}

/**
 * Reads a regular file of at most `maxBytes` within FILE_READ_TIMEOUT_MS. Anything else is refused
 * before a byte is read: a FIFO would block the read (and every reload queued behind it) for ever,
 * a device such as /dev/zero would fill memory.
 */
export async function readRegularFile(
  file: string,
  maxBytes: number,
  timeoutMs = FILE_READ_TIMEOUT_MS,
): Promise<{ readonly text: string } | { readonly reason: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<{ reason: string }>((resolve) => {
    timer = setTimeout(() => {
      resolve({ reason: `not read within ${timeoutMs / 1000} s` });
    }, timeoutMs);
  });
  try {
    return await Promise.race([readBounded(file, maxBytes), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function readBounded(
  file: string,
  maxBytes: number,
): Promise<{ readonly text: string } | { readonly reason: string }> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; O_NOCTTY: a
    // terminal device must not become the process's controlling terminal.
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    return { reason: describeError(error) };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { reason: `not a regular file (${fileKind(stats)})` };
    if (stats.size > maxBytes) return { reason: `larger than ${describeBytes(maxBytes)}` };
    // One byte more than allowed: a file that grew since stat is caught too.
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > maxBytes) return { reason: `larger than ${describeBytes(maxBytes)}` };
    }
    return { text: buffer.toString('utf8', 0, length) };
  } catch (error) {
    return { reason: describeError(error) };
  } finally {
    await handle.close().catch(() => {});
  }
}

function fileKind(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a file';
}

/** `64 KiB`, `8 MiB`. */
function describeBytes(bytes: number): string {
  if (bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/**
 * Reads `server.tls`'s certificate and key and checks that TLS can use them together, so a wrong
 * file is a config problem at load (or reload) time, not a failed handshake at the first scrape.
 */
export async function readServerTls(
  setting: { readonly certFile: string; readonly keyFile: string } | undefined,
): Promise<{ readonly tls: ServerTls | undefined } | { readonly problems: ConfigProblem[] }> {
  if (setting === undefined) return { tls: undefined };
  const [cert, key] = await Promise.all([
    readSettingFile(setting.certFile, 'server.tls.certFile'),
    readSettingFile(setting.keyFile, 'server.tls.keyFile'),
  ]);
  if ('problem' in cert || 'problem' in key) {
    return {
      problems: [cert, key].flatMap((file) => ('problem' in file ? [file.problem] : [])),
    };
  }
  try {
    createSecureContext({ cert: cert.text, key: key.text });
  } catch (error) {
    return {
      problems: [
        {
          path: 'server.tls',
          message: `certFile and keyFile are not a PEM certificate and its private key (${describeError(error)})`,
        },
      ],
    };
  }
  return { tls: { ...setting, cert: cert.text, key: new Secret(key.text) } };
}

/** An error's code (ENOENT…) when it has one, else its message. */
export function describeError(error: unknown): string {
  if (error instanceof Error && 'code' in error && typeof error.code === 'string')
    return error.code;
  return error instanceof Error ? error.message : String(error);
}

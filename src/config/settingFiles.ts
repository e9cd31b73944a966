import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import type { ConfigProblem } from './problems.js';
import { Secret } from '../secrets/secret.js';
import type { ServerTls } from './types.js';

/** A file's text, or the problem to report at the setting that named it. */
export type SettingFile = { readonly text: string } | { readonly problem: ConfigProblem };

/** Reads a file named by the setting at `settingPath` (`trunk.tokenFile`…). */
export async function readSettingFile(file: string, settingPath: string): Promise<SettingFile> {
  try {
    return { text: await readFile(file, 'utf8') };
  } catch (error) {
    return {
      problem: { path: settingPath, message: `cannot read ${file}: ${describeError(error)}` },
    };
  }
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

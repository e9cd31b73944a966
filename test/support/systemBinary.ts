import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Finds a system binary a test needs (promtool, prometheus…). Absent, the test may skip so that
 * `npm test` works on a fresh machine, naming `debianPackage`, the Debian package that installs
 * it; but under REQUIRE_SYSTEM_BINARIES=1 (set by .ci/run) an absent binary is an error, so CI can
 * never pass by skipping.
 */
export function findSystemBinary(name: string, debianPackage: string): string | undefined {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  if (process.env.REQUIRE_SYSTEM_BINARIES === '1') {
    throw new Error(
      `${name} is required (REQUIRE_SYSTEM_BINARIES=1) but not on PATH; install Debian's package for it`,
    );
  }
  console.warn(`skipping: ${name} is not installed (apt-get install ${debianPackage} provides it)`);
  return undefined;
}

import { readFileSync } from 'node:fs';

// Read at run time from package.json (one level above both src/ and dist/), so the version in
// build_info, the landing page and --version can never disagree with the package.
const packageJson = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
) as { version?: unknown };

/** The exporter's version, from package.json. */
export const VERSION = typeof packageJson.version === 'string' ? packageJson.version : '0.0.0';

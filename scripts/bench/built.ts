// Benchmarks drive the built exporter (dist/), the code users run, while type-checking against the
// sources: `import type` is erased by Node's type stripping, so only the built module is loaded.
import { fileURLToPath } from 'node:url';

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Loads `dist/<path>`, typed as the source module it was built from. */
export async function loadBuilt<T>(path: string): Promise<T> {
  try {
    return (await import(new URL(`../../dist/${path}`, import.meta.url).href)) as T;
  } catch (error) {
    throw new Error(`cannot load dist/${path}; run "npm run build" first`, { cause: error });
  }
}

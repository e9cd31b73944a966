// Loaded by bin/trunk-exporter.js before anything else, so it must run on any Node.js that can load
// an ES module: no imports, nothing newer than the language those versions parse.

/**
 * The oldest Node.js the exporter runs on: the highest floor of its dependencies' `engines`
 * (undici 8 needs 22.19.0). package.json's `engines`, the README, the Dockerfile and the Helm chart
 * say the same; test/cli/nodeVersion.test.ts checks them all against package-lock.json.
 */
export const REQUIRED_NODE_VERSION = '22.19.0';

/**
 * Why the exporter cannot run on Node.js `found` (e.g. `process.versions.node`), in one line; undefined
 * when it can. Below the floor it would start, report ready and fail every scrape.
 */
export function nodeVersionProblem(found: string): string | undefined {
  if (compareVersions(found, REQUIRED_NODE_VERSION) >= 0) return undefined;
  return (
    `Node.js ${found} is too old: trunk-exporter needs Node.js >= ${REQUIRED_NODE_VERSION}; ` +
    'install a newer Node.js (the container image has one)'
  );
}

/** Negative, zero or positive as `a` is older than, the same as or newer than `b` (x.y.z). */
export function compareVersions(a: string, b: string): number {
  const left = a.split('.').map((part) => parseInt(part, 10) || 0);
  const right = b.split('.').map((part) => parseInt(part, 10) || 0);
  for (let index = 0; index < 3; index++) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

// The Node.js floor: the start-up check of the built command line (run with a faked
// process.versions.node), and the floor itself, against every dependency's `engines` in
// package-lock.json and everywhere the project states it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  compareVersions,
  nodeVersionProblem,
  REQUIRED_NODE_VERSION,
} from '../../src/cli/nodeVersion.js';
import { REPOSITORY_ROOT, runNode } from '../support/nodeProcess.js';

const read = (path: string): string => readFileSync(join(REPOSITORY_ROOT, path), 'utf8');

/** `node --import` code that makes process.versions.node say `version`, as an old Node.js would. */
function fakeNodeVersion(version: string): string {
  return `data:text/javascript,Object.defineProperty(process.versions, "node", { value: "${version}" })`;
}

describe('the start-up check of the Node.js version', () => {
  it('prints one fatal line naming both versions and exits 1 below the floor', async () => {
    for (const found of ['20.11.1', '22.18.9']) {
      const result = await runNode([
        '--import',
        fakeNodeVersion(found),
        'bin/trunk-exporter.js',
        '--version',
      ]);
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `trunk-exporter: Node.js ${found} is too old: trunk-exporter needs Node.js >= 22.19.0; ` +
          'install a newer Node.js (the container image has one)\n',
      });
    }
  });

  it('lets the floor itself and anything newer through', async () => {
    const result = await runNode([
      '--import',
      fakeNodeVersion(REQUIRED_NODE_VERSION),
      'bin/trunk-exporter.js',
      '--version',
    ]);
    expect(result).toEqual({ code: 0, stdout: 'trunk-exporter 0.1.0\n', stderr: '' });
    for (const found of ['22.19.0', '22.20.1', '23.0.0', '24.21.0', '26.1.0']) {
      expect(nodeVersionProblem(found), found).toBeUndefined();
    }
    expect(nodeVersionProblem('22.9.0')).toContain('Node.js 22.9.0 is too old');
  });
});

describe("the build's check of the Node.js version", () => {
  // `npm run build` (run first by `npm run demo` and `npm test`) runs scripts/bundle.ts, which a
  // Node.js without type stripping cannot load: the build checks the version before it.
  it("stops the build with the exporter's own line and exit 1 below the floor", async () => {
    for (const found of ['20.11.1', '22.12.0', '22.18.9']) {
      const result = await runNode([
        '--import',
        fakeNodeVersion(found),
        'scripts/check-node-version.mjs',
      ]);
      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr: `trunk-exporter: ${nodeVersionProblem(found)}\n`,
      });
    }
  });

  it('lets the floor and anything newer through, silently', async () => {
    for (const found of [REQUIRED_NODE_VERSION, '24.21.0']) {
      const result = await runNode([
        '--import',
        fakeNodeVersion(found),
        'scripts/check-node-version.mjs',
      ]);
      expect(result).toEqual({ code: 0, stdout: '', stderr: '' });
    }
  });

  it("runs first in the build, and goes into the image's build", () => {
    const { scripts } = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(scripts.build).toMatch(/^node scripts\/check-node-version\.mjs && /);
    expect(read('.dockerignore')).toContain('\n!scripts/check-node-version.mjs\n');
    expect(read('Dockerfile')).toContain(
      'COPY scripts/bundle.ts scripts/check-node-version.mjs ./scripts/',
    );
  });
});

/** Whether `version` satisfies an npm `engines` range of the forms dependencies use. */
function satisfies(version: string, range: string): boolean {
  return range.split('||').some((alternative) => {
    const match = /^\s*(>=|\^)?\s*(\d+)(?:\.(\d+|x))?(?:\.(\d+|x))?\s*$/.exec(alternative);
    if (!match) throw new Error(`unsupported engines range "${range}"`);
    const [, operator, major = '0', minor = '0', patch = '0'] = match;
    const floor = [major, minor, patch].map((part) => (part === 'x' ? '0' : part)).join('.');
    if (compareVersions(version, floor) < 0) return false;
    // A bare major (`18`, `10.x`) and `^` stay within that major; `>=` has no ceiling.
    return operator === '>=' || compareVersions(version, `${Number(major) + 1}.0.0`) < 0;
  });
}

describe('the Node.js floor', () => {
  const lock = JSON.parse(read('package-lock.json')) as {
    packages: Record<string, { engines?: { node?: string } }>;
  };
  const ranges = Object.entries(lock.packages).flatMap(([path, entry]) =>
    entry.engines?.node === undefined || path === '' ? [] : [{ path, range: entry.engines.node }],
  );

  it('satisfies every dependency, and the version before it does not', () => {
    expect(ranges.length).toBeGreaterThan(100);
    expect(ranges.filter(({ range }) => !satisfies(REQUIRED_NODE_VERSION, range))).toEqual([]);
    expect(ranges.filter(({ range }) => !satisfies('22.18.99', range))).toEqual([
      { path: 'node_modules/undici', range: '>=22.19.0' },
    ]);
  });

  it('is what package.json, the README, the Dockerfile and the Helm chart say', () => {
    const [major, minor] = REQUIRED_NODE_VERSION.split('.');
    const short = `${major}.${minor}`;
    expect((JSON.parse(read('package.json')) as { engines: unknown }).engines).toEqual({
      node: `>=${REQUIRED_NODE_VERSION}`,
    });
    expect(read('README.md')).toContain(`Node.js ≥ ${short}`);
    expect(read('README.md')).not.toMatch(/Node\.js ≥ (?!22\.19)\d/);
    expect(read('Dockerfile')).toContain(`Node.js >= ${short}`);
    expect(read('helm/trunk-exporter/values.yaml')).toContain(`Node.js >= ${short}`);
  });
});

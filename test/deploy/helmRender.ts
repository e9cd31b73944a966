// Renders a Helm chart with test/deploy/helm-render (Go: text/template, sprig, ghodss/yaml and
// gojsonschema, the libraries Helm itself uses), built once per source version into the temporary
// directory, never into the repository.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { findSystemBinary } from '../support/systemBinary.js';

const run = promisify(execFile);

const SOURCES = join(import.meta.dirname, 'helm-render');
/** Debian's Go library tree, which the renderer builds against in GOPATH mode. */
const GOPATH = '/usr/share/gocode';
/** The Go packages, each with the Debian package that installs it. */
const GO_LIBRARIES: Readonly<Record<string, string>> = {
  'github.com/Masterminds/sprig': 'golang-github-masterminds-sprig-dev',
  'github.com/ghodss/yaml': 'golang-github-ghodss-yaml-dev',
  'github.com/xeipuuv/gojsonschema': 'golang-github-xeipuuv-gojsonschema-dev',
};

/** How long a build may hold the lock before another run takes it as left behind. */
const STALE_LOCK_MS = 180_000;

/** A rendered chart: its manifests, each parsed as the API server parses it, and NOTES.txt. */
export interface RenderedChart {
  readonly manifests: readonly { source: string; text: string; object: unknown }[];
  readonly notes: string;
}

/** How a chart is rendered: `helm template NAME CHART -f FILE... --kube-version V`. */
export interface RenderOptions {
  readonly valueFiles?: readonly string[];
  readonly releaseName?: string;
  readonly namespace?: string;
  readonly kubeVersion?: string;
  readonly apiVersions?: readonly string[];
}

/** A render that failed as `helm install` would: exit status 1 and Helm's message. */
export class RenderError extends Error {}

/**
 * The renderer's path, built if needed; undefined (the tests skip) when Go or one of its Debian
 * library packages is absent, an error instead under REQUIRE_SYSTEM_BINARIES=1.
 */
export async function helmRenderer(): Promise<string | undefined> {
  const go = findSystemBinary('go', 'golang-go');
  const missing = Object.entries(GO_LIBRARIES).filter(
    ([library]) => !existsSync(join(GOPATH, 'src', library)),
  );
  if (go === undefined || missing.length > 0) {
    const packages = ['golang-go', ...missing.map(([, debian]) => debian)].join(' ');
    const message = `the Helm chart cannot be rendered: apt-get install ${packages}`;
    if (process.env.REQUIRE_SYSTEM_BINARIES === '1') throw new Error(message);
    console.warn(`skipping: ${message}`);
    return undefined;
  }
  return build(go);
}

/** Builds into tmpdir/trunk-exporter-helm-render-HASH once; concurrent test files wait for it. */
async function build(go: string): Promise<string> {
  const hash = createHash('sha256');
  for (const name of readdirSync(SOURCES)
    .filter((file) => file.endsWith('.go'))
    .sort()) {
    hash.update(name).update(readFileSync(join(SOURCES, name)));
  }
  const directory = join(tmpdir(), `trunk-exporter-helm-render-${hash.digest('hex').slice(0, 16)}`);
  const binary = join(directory, 'helm-render');
  const lock = `${directory}.lock`;
  mkdirSync(directory, { recursive: true });
  for (;;) {
    if (existsSync(binary)) return binary;
    try {
      mkdirSync(lock);
    } catch {
      // Another test file is building it; a lock older than a build takes was left by a killed run.
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held !== undefined && Date.now() - held.mtimeMs > STALE_LOCK_MS) {
        rmSync(lock, { recursive: true, force: true });
      }
      await sleep(200);
      continue;
    }
    try {
      const partial = `${binary}.${process.pid}`;
      await run(go, ['build', '-o', partial, '.'], {
        cwd: SOURCES,
        env: {
          ...process.env,
          GO111MODULE: 'off',
          GOPATH,
          GOFLAGS: '',
          GOCACHE: join(tmpdir(), 'trunk-exporter-go-build-cache'),
        },
      });
      renameSync(partial, binary);
      return binary;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

/** Renders CHART; rejects with a RenderError carrying Helm's message when helm would fail. */
export async function renderChart(
  renderer: string,
  chart: string,
  options: RenderOptions = {},
): Promise<RenderedChart> {
  const args = [
    '--release-name',
    options.releaseName ?? 'trunk-exporter',
    '--namespace',
    options.namespace ?? 'monitoring',
    ...(options.kubeVersion === undefined ? [] : ['--kube-version', options.kubeVersion]),
    ...(options.apiVersions ?? []).flatMap((version) => ['--api-versions', version]),
    ...(options.valueFiles ?? []).flatMap((file) => ['-f', file]),
    chart,
  ];
  try {
    const { stdout } = await run(renderer, args, { maxBuffer: 64 * 1024 * 1024 });
    return JSON.parse(stdout) as RenderedChart;
  } catch (error) {
    const { code, stderr } = error as { code?: unknown; stderr?: string };
    if (code === 1 && stderr !== undefined) throw new RenderError(stderr.trim());
    throw error;
  }
}

// The landing page as a browser draws it: the demo served to Debian's headless Chromium, which
// dumps the DOM and writes a screenshot (reports/landing-page.png, outside the repository's files).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startDemo } from '../../src/demo/demo.js';
import type { RunningExporter } from '../../src/exporter.js';
import { silentLogger } from '../../src/log/logger.js';
import { countColour, decodePng, distinctColours } from '../support/png.js';
import { findSystemBinary } from '../support/systemBinary.js';

const chromium = findSystemBinary('chromium', 'chromium');

/** The flags that keep Chromium from reaching anything but the page, and from needing a desktop. */
const HEADLESS_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--hide-scrollbars',
];

const WIDTH = 1280;
const HEIGHT = 900;

let demo: RunningExporter | undefined;
const directories: string[] = [];
afterEach(async () => {
  await demo?.stop();
  demo = undefined;
  for (const directory of directories.splice(0))
    rmSync(directory, { recursive: true, force: true });
});

/** Runs Chromium once on `url` with a fresh profile; resolves to what it printed on stdout. */
function runChromium(binary: string, args: readonly string[], url: string): Promise<string> {
  const profile = mkdtempSync(join(tmpdir(), 'trunk-exporter-chromium-'));
  directories.push(profile);
  return new Promise((resolve, reject) => {
    const child = spawn(binary, [...HEADLESS_FLAGS, `--user-data-dir=${profile}`, ...args, url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`chromium exited with ${String(code)}: ${stderr.slice(-2000)}`));
    });
  });
}

describe('landing page in headless Chromium', () => {
  it.skipIf(chromium === undefined)(
    'renders the demo: tables in the DOM, and a screenshot that is not blank and shows the state colours',
    async () => {
      const binary = chromium ?? 'chromium';
      demo = await startDemo({
        logger: silentLogger(),
        version: '0.0.0-test',
        port: 0,
        address: '127.0.0.1',
      });
      const deadline = Date.now() + 15_000;
      while ((await fetch(`${demo.url}/readyz`)).status !== 200) {
        if (Date.now() > deadline) throw new Error('demo never became ready');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const url = `${demo.url}/`;

      const dom = await runChromium(binary, ['--dump-dom'], url);
      expect(dom).toContain('<h2>Merge queues</h2>');
      expect(dom).toContain('<h2>Quarantine lists</h2>');
      expect(dom.match(/<tr>/g)?.length).toBe(2 + 4 + 4);
      expect(dom).toContain('built-in Trunk API simulator');

      mkdirSync('reports', { recursive: true });
      const screenshot = join('reports', 'landing-page.png');
      await runChromium(
        binary,
        [`--screenshot=${screenshot}`, `--window-size=${WIDTH},${HEIGHT}`],
        url,
      );
      const image = decodePng(readFileSync(screenshot));
      expect([image.width, image.height]).toEqual([WIDTH, HEIGHT]);
      // Text is anti-aliased into many shades; a blank or unstyled page has a handful of colours.
      expect(distinctColours(image)).toBeGreaterThan(50);
      // The stylesheet applied: the simulator banner's background and the running queues' badges.
      expect(countColour(image, '#fff8c5')).toBeGreaterThan(10_000);
      expect(countColour(image, '#1a7f37')).toBeGreaterThan(200);
    },
    120_000,
  );
});

// The command line runs the exporter from its bundle (scripts/bundle.ts): it loads no module of
// dist/ beyond the launcher's two, and nothing of node_modules but undici's pool; and every chunk
// is ASCII, so V8 keeps its source one byte a character.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, root } from '../support/cli.js';

const run = promisify(execFile);

/** Preload that prints every file module the process loads, once it exits. */
const LIST_LOADED_MODULES = `data:text/javascript,${encodeURIComponent(
  `import { registerHooks } from 'node:module';
   const loaded = new Set();
   registerHooks({ load(url, context, next) { if (url.startsWith('file:')) loaded.add(url); return next(url, context); } });
   process.on('exit', () => { process.stdout.write('LOADED ' + JSON.stringify([...loaded]) + '\\n'); });`,
)}`;

describe('the bundle', () => {
  it('is what the command line loads: of dist/ only the version check and the V8 flags', async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        LIST_LOADED_MODULES,
        CLI_BIN,
        '--check-config',
        '--config',
        'config.example.yaml',
      ],
      { cwd: root, env: { PATH: process.env.PATH ?? '', TRUNK_API_KEY: 'trunk_v2_example' } },
    );
    const line = /^LOADED (.*)$/m.exec(stdout)?.[1];
    expect(line, stdout).toBeDefined();
    // Relative to the repository; a linked node_modules elsewhere gives `../…/node_modules/…`.
    const loaded = (JSON.parse(line ?? '[]') as string[]).map((url) =>
      relative(root, fileURLToPath(url)),
    );
    const outside = loaded.filter(
      (path) => !path.startsWith('bundle/') && !path.includes('node_modules/undici/'),
    );
    expect(outside.sort()).toEqual([
      'bin/trunk-exporter.js',
      'dist/cli/nodeVersion.js',
      'dist/cli/v8Flags.js',
    ]);
    expect(loaded.filter((path) => path.startsWith('bundle/')).length).toBeGreaterThan(0);
  });

  it('is ASCII in every chunk', async () => {
    const dir = join(root, 'bundle');
    const chunks = (await readdir(dir)).filter((name) => name.endsWith('.js'));
    expect(chunks.length).toBeGreaterThan(0);
    for (const name of chunks) {
      const source = await readFile(join(dir, name), 'latin1');
      const offset = source.search(/[^\t\n\r -~]/);
      expect({ name, offset }).toEqual({ name, offset: -1 });
    }
  });
});

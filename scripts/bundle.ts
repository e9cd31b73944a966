// Bundles the built exporter (dist/main.js and what it imports, dependencies included) into
// bundle/, which the `trunk-exporter` command loads: a few chunks instead of every module file,
// without comments, every character ASCII. V8 keeps each loaded module's source as a string on the
// heap (two bytes a character when any is not ASCII), and Node.js keeps a record per module; what
// that comes to is in docs/benchmarks.md (Page per merge queue).
// Dependencies loaded through `createRequire` stay where npm put them (undici's pool).
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = fileURLToPath(new URL('../', import.meta.url));
// One level below the root, as dist/ is, so that `../package.json` from a chunk is the same file.
const outDir = `${root}bundle`;

await rm(outDir, { recursive: true, force: true });
await build({
  // The bcrypt worker is a file of its own, which a chunk starts as `./bcryptWorker.js`.
  input: { main: `${root}dist/main.js`, bcryptWorker: `${root}dist/server/bcryptWorker.js` },
  platform: 'node',
  logLevel: 'warn',
  output: { dir: outDir, format: 'esm', comments: false },
});
for (const name of await readdir(outDir)) {
  if (!name.endsWith('.js')) continue;
  const path = `${outDir}/${name}`;
  const source = await readFile(path, 'utf8');
  // Outside comments (none are left) a \u escape means the same UTF-16 unit in a string, template,
  // regular expression or identifier; a surrogate pair's two escapes still read as one character.
  await writeFile(
    path,
    source.replace(
      /[^\t\n\r -~]/g,
      (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`,
    ),
  );
}

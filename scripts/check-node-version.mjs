// Run first by `npm run build` (and so by `npm run demo` and `npm test`): the build's next step,
// scripts/bundle.ts, needs a Node.js that strips types, and an older one would stop there with a
// stack trace about the `.ts` extension. Below the floor in package.json's `engines` (the same as
// src/cli/nodeVersion.ts's REQUIRED_NODE_VERSION, which test/cli/nodeVersion.test.ts checks), this
// prints the exporter's own one-line message and exits 1. Plain JavaScript that any Node.js able to
// load an ES module runs.
import { readFileSync } from 'node:fs';

const engines = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).engines;
const required = engines.node.replace(/^>=\s*/, '');
const found = process.versions.node;

const parts = (version) => version.split('.').map((part) => parseInt(part, 10) || 0);
const [left, right] = [parts(found), parts(required)];
let difference = 0;
for (let index = 0; index < 3 && difference === 0; index++) {
  difference = (left[index] || 0) - (right[index] || 0);
}
if (difference < 0) {
  process.stderr.write(
    `trunk-exporter: Node.js ${found} is too old: trunk-exporter needs Node.js >= ${required}; ` +
      'install a newer Node.js (the container image has one)\n',
  );
  process.exitCode = 1;
}

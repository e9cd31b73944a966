#!/usr/bin/env node
// Thin launcher so the published `bin` works without a TypeScript loader: the code lives in dist/,
// and the exporter runs from its bundle (bundle/, scripts/bundle.ts says why). The Node.js version
// is checked first: below the floor the exporter would start, report ready and answer every scrape
// with a 500. Then V8's flags are set before anything else is loaded (src/cli/v8Flags.ts says which
// and why).
import { nodeVersionProblem } from '../dist/cli/nodeVersion.js';

const problem = nodeVersionProblem(process.versions.node);
if (problem === undefined) {
  const { applyExporterV8Flags } = await import('../dist/cli/v8Flags.js');
  applyExporterV8Flags();
  const { main } = await import('../bundle/main.js');
  process.exitCode = await main(process.argv.slice(2));
} else {
  process.stderr.write(`trunk-exporter: ${problem}\n`);
  process.exitCode = 1;
}

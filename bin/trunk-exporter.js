#!/usr/bin/env node
// Thin launcher so the published `bin` works without a TypeScript loader: the code lives in dist/.
// V8's flags are set before anything else is loaded (src/cli/v8Flags.ts says which and why).
const { applyExporterV8Flags } = await import('../dist/cli/v8Flags.js');
applyExporterV8Flags();
const { main } = await import('../dist/main.js');

process.exitCode = await main(process.argv.slice(2));

#!/usr/bin/env node
// Thin launcher so the published `bin` works without a TypeScript loader: the code lives in dist/.
import { setFlagsFromString } from 'node:v8';

// Before anything is loaded: V8 then grows its heap less for the first poll cycle and the first
// render of a large page, and gives memory back sooner (docs/benchmarks.md, Memory).
setFlagsFromString('--optimize-for-size');
const { main } = await import('../dist/main.js');

process.exitCode = await main(process.argv.slice(2));

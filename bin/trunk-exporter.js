#!/usr/bin/env node
// Thin launcher so the published `bin` works without a TypeScript loader: the code lives in dist/.
import { main } from '../dist/main.js';

process.exitCode = await main(process.argv.slice(2));

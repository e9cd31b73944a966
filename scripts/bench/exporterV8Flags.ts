// Imported first by run.ts, so that the exporter code the benchmarks run in this process (the cycle
// time's poll jobs and client) runs under the same V8 flags as the `trunk-exporter` command, set
// the same way. A synchronous require: a module that awaited here would not hold back the
// benchmark modules imported after it.
import { createRequire } from 'node:module';
import type * as V8FlagsModule from '../../src/cli/v8Flags.js';

const require = createRequire(import.meta.url);
const { applyExporterV8Flags } = require('../../dist/cli/v8Flags.js') as typeof V8FlagsModule;
applyExporterV8Flags();

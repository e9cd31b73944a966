import { setFlagsFromString } from 'node:v8';

/**
 * V8's flags for the exporter process. `--optimize-for-size`: V8 then grows its heap less for the
 * first poll cycle and the first render of a large page, and gives memory back sooner
 * (docs/benchmarks.md, Memory).
 */
export const EXPORTER_V8_FLAGS = '--optimize-for-size';

/**
 * Sets EXPORTER_V8_FLAGS at run time. Called before the exporter's modules load, by the command
 * line and by the benchmarks that run its code in their own process, so both run under the same
 * settings (set at run time they differ from the same flags on node's command line, which also
 * size the heap at start-up).
 */
export function applyExporterV8Flags(): void {
  setFlagsFromString(EXPORTER_V8_FLAGS);
}

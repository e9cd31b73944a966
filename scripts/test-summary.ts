// Prints vitest's JSON report as one plain closing line ("tests: N passed, N failed, N skipped"),
// the form CI reads to know how many tests ran. Run with Node.js's own type stripping.
import { readFileSync } from 'node:fs';
import { z } from 'zod';

const reportSchema = z.object({
  numPassedTests: z.number(),
  numFailedTests: z.number(),
  numPendingTests: z.number().default(0),
  numTodoTests: z.number().default(0),
});

const path = process.argv[2] ?? 'reports/vitest-results.json';
const report = reportSchema.parse(JSON.parse(readFileSync(path, 'utf8')));
const skipped = report.numPendingTests + report.numTodoTests;
process.stdout.write(
  `tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped\n`,
);

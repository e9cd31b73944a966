// Prints vitest's JSON report as one plain closing line ("tests: N passed, N failed, N skipped"),
// the form CI reads to know how many tests ran.
import { readFileSync } from 'node:fs';

const path = process.argv[2] ?? 'reports/vitest-results.json';
const report = JSON.parse(readFileSync(path, 'utf8'));
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
process.stdout.write(
  `tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped\n`,
);

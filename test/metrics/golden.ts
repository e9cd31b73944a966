import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

// Whole exposition pages are compared, as the Prometheus Go exporters do: a renamed label, a lost
// zero series or a broken escape all show up as a diff. Regenerate after an intended change with
// `UPDATE_GOLDEN=1 npx vitest run test/metrics` and review the diff like code.

const GOLDEN_DIR = join(import.meta.dirname, 'golden');

/** Compares `actual` with test/metrics/golden/<file>, or rewrites the file under UPDATE_GOLDEN=1. */
export function expectGolden(file: string, actual: string): void {
  const path = join(GOLDEN_DIR, file);
  if (process.env.UPDATE_GOLDEN === '1') {
    writeFileSync(path, actual);
    return;
  }
  if (!existsSync(path)) {
    throw new Error(
      `golden file ${path} is missing; create it with UPDATE_GOLDEN=1 npx vitest run test/metrics`,
    );
  }
  expect(actual).toBe(readFileSync(path, 'utf8'));
}

import type { z } from 'zod';

/** One thing wrong with a configuration: where (as written in the file) and what. */
export interface ConfigProblem {
  /** `targets[1].branches`; '' for the document itself. */
  readonly path: string;
  readonly message: string;
  /** 1-based line in the file, when known. */
  readonly line?: number;
}

/** Thrown when a configuration cannot be used; carries every problem found, not only the first. */
export class ConfigError extends Error {
  constructor(
    readonly source: string,
    readonly problems: readonly ConfigProblem[],
  ) {
    super(`invalid configuration in ${source}:\n${problems.map(formatProblem).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** `targets[1].branches: expected a non-empty list (line 12)`. */
export function formatProblem(problem: ConfigProblem): string {
  const where = problem.path === '' ? '' : `${problem.path}: `;
  const line = problem.line === undefined ? '' : ` (line ${problem.line})`;
  return `${where}${problem.message}${line}`;
}

/** Every problem as `--check-config` prints it: `FILE: path: message (line N)`. */
export function configErrorLines(error: ConfigError): string[] {
  return error.problems.map((problem) => `${error.source}: ${formatProblem(problem)}`);
}

/** `['targets', 1, 'branches']` → `targets[1].branches`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let result = '';
  for (const segment of path) {
    if (typeof segment === 'number') result += `[${segment}]`;
    else result += result === '' ? String(segment) : `.${String(segment)}`;
  }
  return result;
}

/** Turns zod issues into problems with paths as written in the file and messages a person can act on. */
export function problemsFromZod(
  issues: readonly z.core.$ZodIssue[],
): { path: PropertyKey[]; message: string; linePath?: PropertyKey[] }[] {
  const problems: { path: PropertyKey[]; message: string; linePath?: PropertyKey[] }[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        problems.push({ path: [...issue.path, key], message: 'unknown key' });
    } else if (issue.code === 'invalid_type') {
      problems.push({
        path: issue.path,
        message: describeInvalidType(issue.message, issue.expected),
      });
    } else if (issue.code === 'custom' && Array.isArray(issue.params?.linePath)) {
      // A rule about a key left out says which line made it required.
      const linePath = issue.params.linePath as PropertyKey[];
      problems.push({ path: issue.path, message: issue.message, linePath });
    } else {
      problems.push({ path: issue.path, message: issue.message });
    }
  }
  return problems;
}

function describeInvalidType(message: string, expected: string): string {
  if (message.endsWith('received undefined')) return `required (expected ${expected})`;
  return message.replace(/^Invalid input: /, '').replace('received', 'got');
}

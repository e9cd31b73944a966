import type { z } from 'zod';

/** One thing wrong with a configuration: where (as written in the file) and what. */
export interface ConfigProblem {
  /** `targets[1].branches`; '' for the document itself. */
  readonly path: string;
  readonly message: string;
  /** 1-based line in the file, when known. */
  readonly line?: number;
}

/**
 * Problems listed at most in one report, so that a file of many unknown keys makes no log line of
 * megabytes: the first ones in file order say what is wrong, and the rest are counted.
 */
export const MAX_REPORTED_PROBLEMS = 20;

/** Thrown when a configuration cannot be used; lists the first problems found and counts the rest. */
export class ConfigError extends Error {
  /** The first MAX_REPORTED_PROBLEMS problems, in the order given. */
  readonly problems: readonly ConfigProblem[];
  /** How many problems beyond `problems` were found and not listed. */
  readonly omitted: number;

  constructor(
    readonly source: string,
    problems: readonly ConfigProblem[],
  ) {
    const listed = problems.slice(0, MAX_REPORTED_PROBLEMS);
    const omitted = problems.length - listed.length;
    super(`invalid configuration in ${source}:\n${reportLines(listed, omitted).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = listed;
    this.omitted = omitted;
  }
}

/** `targets[1].branches: expected a non-empty list (line 12)`. */
export function formatProblem(problem: ConfigProblem): string {
  const where = problem.path === '' ? '' : `${problem.path}: `;
  const line = problem.line === undefined ? '' : ` (line ${problem.line})`;
  return `${where}${problem.message}${line}`;
}

/** Each listed problem formatted, then how many more there are when some were left out. */
export function problemLines(error: ConfigError): string[] {
  return reportLines(error.problems, error.omitted);
}

/** Every problem as `--check-config` prints it: `FILE: path: message (line N)`. */
export function configErrorLines(error: ConfigError): string[] {
  return problemLines(error).map((line) => `${error.source}: ${line}`);
}

function reportLines(listed: readonly ConfigProblem[], omitted: number): string[] {
  const more =
    omitted === 0
      ? []
      : [
          `and ${omitted} more ${omitted === 1 ? 'problem' : 'problems'} (the first ${listed.length} are listed)`,
        ];
  return [...listed.map(formatProblem), ...more];
}

/** `['targets', 1, 'branches']` → `targets[1].branches`; an odd key is shown quoted (displayKey). */
export function formatPath(path: readonly PropertyKey[]): string {
  let result = '';
  for (const segment of path) {
    if (typeof segment === 'number') result += `[${segment}]`;
    else result += (result === '' ? '' : '.') + displayKey(String(segment));
  }
  return result;
}

/** Characters of a key shown at most; a longer one is cut there and its length given. */
export const MAX_SHOWN_KEY_CHARACTERS = 64;

/**
 * A key as a message shows it: as written when it is printable ASCII, as every known key is; else
 * quoted, each other character escaped (`"tr\u0443nk"`) and cut to MAX_SHOWN_KEY_CHARACTERS. A
 * look-alike letter or an invisible character is likelier than not why a key that reads right is
 * unknown, and shown raw it reads as the key suggested beside it; a key of megabytes, written out,
 * made a log line of megabytes on every reload.
 */
export function displayKey(key: string): string {
  return displayText(key, MAX_SHOWN_KEY_CHARACTERS);
}

/** Characters of a value a problem names (a target) shown at most: a branch may be long. */
export const MAX_SHOWN_VALUE_CHARACTERS = 300;

/**
 * `text` as written when it is printable ASCII of at most `maxShown` characters; else quoted, each
 * other character escaped and cut to `maxShown`, its length given: a right-to-left override or an
 * invisible character shown raw turns or hides what the message says.
 */
export function displayText(text: string, maxShown: number): string {
  if (/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$/.test(text) && text.length <= maxShown) {
    return text;
  }
  const shown = text.slice(0, maxShown).replace(/["\\]|[^\x20-\x7e]/g, (character) => {
    if (character === '"' || character === '\\') return `\\${character}`;
    if (character === '\t') return '\\t';
    if (character === '\n') return '\\n';
    return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  return text.length > maxShown ? `"${shown}"… (${text.length} characters)` : `"${shown}"`;
}

/**
 * Turns zod issues into problems with paths as written in the file and messages a person can act
 * on; `unknownKeyMessage` words an unknown key (unknownKeys.ts names the key likely meant).
 */
export function problemsFromZod(
  issues: readonly z.core.$ZodIssue[],
  unknownKeyMessage: (parentPath: readonly PropertyKey[], key: string) => string = () =>
    'unknown key',
): { path: PropertyKey[]; message: string; linePath?: PropertyKey[] }[] {
  const problems: { path: PropertyKey[]; message: string; linePath?: PropertyKey[] }[] = [];
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        problems.push({ path: [...issue.path, key], message: unknownKeyMessage(issue.path, key) });
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

// The transitions a queue's history reads counted for one pull request (CountedTransitions): one
// line each in one flat string. A queue keeps them for every pull request in it whose history was
// read, tens of thousands in a large organization, so each costs a line of text rather than a map
// entry, an object and the pieces of a built string (docs/benchmarks.md, Over hours).
import type { CountedTransitions } from '../snapshot/entryHistoryTypes.js';

const LINE_END = '\n';

/** States are an open vocabulary: the characters the lines use are escaped in them. */
const RESERVED = /[%\n/>]/g;

function escaped(state: string): string {
  return state.replace(
    RESERVED,
    (character) => `%${character.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/**
 * The line of the transition into `to` from `from` at `at` (unix seconds), to the millisecond,
 * joined whole: a template would keep it as a chain of its pieces.
 */
export function transitionLine(at: number, from: string, to: string): string {
  return [String(Math.round(at * 1000)), '/', escaped(from), '>', escaped(to)].join('');
}

/** The lines of `counted`, oldest counted first. */
export function countedLines(counted: CountedTransitions): string[] {
  return counted.split(LINE_END);
}

/** `lines` as one string, joined whole. */
export function joinedLines(lines: Iterable<string>): CountedTransitions {
  return [...lines].join(LINE_END);
}

function lineTime(line: string): number {
  return Number(line.slice(0, line.indexOf('/'))) / 1000;
}

/**
 * Whether the latest transition in `counted` (the last listed of those at one time) entered one of
 * `states`.
 */
export function latestEntered(counted: CountedTransitions, states: ReadonlySet<string>): boolean {
  let latest: string | undefined;
  let latestAt = -Infinity;
  for (const line of countedLines(counted)) {
    const at = lineTime(line);
    if (at >= latestAt) {
      latest = line;
      latestAt = at;
    }
  }
  if (latest === undefined) return false;
  const entered = latest.slice(latest.lastIndexOf('>') + 1);
  for (const state of states) if (escaped(state) === entered) return true;
  return false;
}

/** The transitions of `counted` at or after `since` (unix seconds); undefined when none. */
export function countedSince(
  counted: CountedTransitions,
  since: number,
): CountedTransitions | undefined {
  const all = countedLines(counted);
  const recent = all.filter((line) => lineTime(line) >= since);
  if (recent.length === 0) return undefined;
  return recent.length === all.length ? counted : recent.join(LINE_END);
}

/** How many transitions `counted` holds. */
export function lineCount(counted: CountedTransitions): number {
  let count = 1;
  for (let at = counted.indexOf(LINE_END); at !== -1; at = counted.indexOf(LINE_END, at + 1)) {
    count += 1;
  }
  return count;
}

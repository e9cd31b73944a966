// The parsed YAML document as plain data, with the `yaml` package's guard against alias bombs and
// where to point a reader when it trips; and the line of a place in the file.
import { CST, Parser, isAlias, visit, type Document, type LineCounter, type Node } from 'yaml';
import { ConfigError } from './problems.js';

/**
 * The `yaml` package's guard against alias bombs (a few lines whose aliases expand to billions of
 * nodes): over this many alias expansions the file is refused. Above its default of 100, so that a
 * list of branches can be shared by a few hundred targets.
 */
export const MAX_YAML_ALIAS_COUNT = 1000;

/** The document as plain data; an alias bomb is a problem at the alias that set it off. */
export function documentValue(
  document: Document,
  lineCounter: LineCounter,
  source: string,
): unknown {
  try {
    return document.toJS({ maxAliasCount: MAX_YAML_ALIAS_COUNT });
  } catch (error) {
    const excessive = error instanceof Error && /excessive alias count/i.test(error.message);
    const message = excessive
      ? `aliases expand beyond the limit of ${MAX_YAML_ALIAS_COUNT} (an alias bomb?); write the values out instead`
      : error instanceof Error
        ? error.message
        : String(error);
    const offset = excessiveAliasOffset(document, MAX_YAML_ALIAS_COUNT);
    throw new ConfigError(source, [
      {
        path: '',
        message: `YAML: ${message}`,
        ...(offset === undefined ? {} : lineOf(offset, lineCounter)),
      },
    ]);
  }
}

/**
 * Where a reader should look for an alias bomb: the first alias (in file order) at which the
 * aliases so far, each counted with every alias its target holds, pass `limit`; else the first
 * alias. One pass in file order (anchors resolved as they are met), each anchored node walked once.
 */
function excessiveAliasOffset(document: Document, limit: number): number | undefined {
  const anchors = new Map<string, Node>();
  /** What an alias costs: itself and, recursively, every alias inside its target. */
  const aliasCosts = new Map<Node, number>();
  const targetCosts = new Map<Node, number>();
  const targetCost = (target: Node): number => {
    const known = targetCosts.get(target);
    if (known !== undefined) return known;
    let cost = 0;
    // Aliases inside the target come before it is referenced, so theirs are known.
    visit(target, {
      Alias(_key, alias) {
        cost += aliasCosts.get(alias) ?? 1;
      },
    });
    targetCosts.set(target, cost);
    return cost;
  };
  let first: number | undefined;
  let found: number | undefined;
  let total = 0;
  visit(document, {
    Node(_key, node) {
      if (isAlias(node)) {
        first ??= node.range?.[0];
        const target = anchors.get(node.source);
        const cost = 1 + (target === undefined ? 0 : targetCost(target));
        aliasCosts.set(node, cost);
        total += cost;
        if (total <= limit) return undefined;
        found = node.range?.[0];
        return visit.BREAK;
      }
      if (node.anchor !== undefined) anchors.set(node.anchor, node);
      return undefined;
    },
  });
  return found ?? first;
}

/** The 1-based line of a character offset of the file. */
export function lineOf(offset: number, lineCounter: LineCounter): { line?: number } {
  return { line: lineCounter.linePos(offset).line };
}

/**
 * The offset where the first quoted scalar left open begins, or undefined. The `yaml` package
 * reports a missing closing quote where the file ends; the value that lacks it is where to look.
 */
export function unclosedQuoteOffset(text: string): number | undefined {
  let found: number | undefined;
  for (const token of new Parser().parse(text)) {
    if (token.type !== 'document' || found !== undefined) continue;
    CST.visit(token, (item) => {
      for (const part of [item.key, item.value]) {
        if (found !== undefined || part === undefined || part === null) continue;
        if (part.type === 'double-quoted-scalar' || part.type === 'single-quoted-scalar') {
          if (!isClosed(part.source, part.type === 'double-quoted-scalar' ? '"' : "'")) {
            found = part.offset;
          }
        }
      }
      return found === undefined ? undefined : CST.visit.BREAK;
    });
  }
  return found;
}

/** Whether a quoted scalar's source ends with its closing quote (not one escaped by a backslash). */
function isClosed(source: string, quote: string): boolean {
  if (source.length < 2 || !source.endsWith(quote)) return false;
  if (quote === "'") return true;
  let backslashes = 0;
  for (let index = source.length - 2; index > 0 && source[index] === '\\'; index -= 1) {
    backslashes += 1;
  }
  return backslashes % 2 === 0;
}

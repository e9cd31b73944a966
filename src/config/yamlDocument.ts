// The parsed YAML document as plain data, with the `yaml` package's guard against alias bombs and
// where to point a reader when it trips; and the line of a place in the file.
import {
  CST,
  Composer,
  Document,
  Lexer,
  Parser,
  YAMLParseError,
  isAlias,
  isMap,
  isNode,
  isScalar,
  isSeq,
  visit,
  type LineCounter,
  type Node,
  type Pair,
  type YAMLMap,
} from 'yaml';
import { ConfigError } from './problems.js';

/**
 * The `yaml` package's guard against alias bombs (a few lines whose aliases expand to billions of
 * nodes): over this many alias expansions the file is refused. Above its default of 100, so that a
 * list of branches can be shared by a few hundred targets.
 */
export const MAX_YAML_ALIAS_COUNT = 1000;

/**
 * Deepest nesting of mappings and lists read. The settings nest four deep; a file nested thousands
 * deep overflowed the stack of the package's recursive composer, which reported only that.
 */
export const MAX_YAML_DEPTH = 100;

/**
 * Most values a file may give: each scalar, and each list item's dash, key's colon or flow
 * collection's bracket that holds them. Each costs far more memory than its bytes while the file
 * is read, so a list of millions of numbers in a file under the size cap would end the process
 * under the chart's memory limit at a reload. 10,000 targets, each with its branches and
 * `flakyTests`, are about 110,000.
 */
export const MAX_YAML_VALUES = 150_000;

/** Why a file is refused before it is composed, and the offset where that shows. */
export interface RefusedYaml {
  readonly refused: 'too_deep' | 'too_many_values';
  readonly at: number;
}

/**
 * The file's first document, as `parseDocument` makes it; or, when the file nests deeper than
 * MAX_YAML_DEPTH or gives more than MAX_YAML_VALUES values, the offset where it first does, found
 * as the file is read, before anything recursive runs.
 */
export function parseYamlDocument(
  text: string,
  options: { readonly lineCounter: LineCounter; readonly uniqueKeys: false },
): Document | RefusedYaml {
  // The parser keeps its own stack, so the tokens of a deep file are read without recursion; fed
  // one lexeme at a time so that depth and values are checked as it goes, before a file to be
  // refused has built its tokens (a file of `[` under the size cap would build gigabytes).
  const parser = new Parser(options.lineCounter.addNewLine);
  options.lineCounter.addNewLine(0);
  const tokens: CST.Token[] = [];
  let values = 0;
  let offset = 0;
  for (const lexeme of new Lexer().lex(text)) {
    if (VALUE_TOKENS.has(CST.tokenType(lexeme) ?? '') && ++values > MAX_YAML_VALUES) {
      return { refused: 'too_many_values', at: offset };
    }
    offset += lexeme.length;
    tokens.push(...parser.next(lexeme));
    const tooDeepAt = tooDeepOffset(parser.stack, MAX_YAML_DEPTH);
    if (tooDeepAt !== undefined) return { refused: 'too_deep', at: tooDeepAt };
  }
  tokens.push(...parser.end());
  let first: Document | undefined;
  for (const document of new Composer({ ...options, prettyErrors: false }).compose(
    tokens,
    true,
    text.length,
  )) {
    if (first === undefined) first = document;
    else {
      first.errors.push(
        new YAMLParseError(
          document.range.slice(0, 2) as [number, number],
          'MULTIPLE_DOCS',
          'Source contains multiple documents; please use YAML.parseAllDocuments()',
        ),
      );
      break;
    }
  }
  return first ?? new Document();
}

/** The lexemes that each make one value: a scalar, or the start of a mapping or list item. */
const VALUE_TOKENS: ReadonlySet<string> = new Set([
  'scalar',
  'single-quoted-scalar',
  'double-quoted-scalar',
  'block-scalar-header',
  'flow-map-start',
  'flow-seq-start',
  'seq-item-ind',
  'explicit-key-ind',
  'map-value-ind',
]);

/**
 * The offset of the collection of the parser's stack that is nested deeper than `limit`, if any:
 * the stack holds every open collection above the token being read, so the first collection past
 * the limit is on it when it opens.
 */
function tooDeepOffset(stack: readonly CST.Token[], limit: number): number | undefined {
  // Besides the collections the stack holds only the document and the token being read.
  if (stack.length <= limit) return undefined;
  let depth = 0;
  for (const token of stack) {
    if (
      token.type === 'block-map' ||
      token.type === 'block-seq' ||
      token.type === 'flow-collection'
    ) {
      depth += 1;
      if (depth > limit) return token.offset;
    }
  }
  return undefined;
}

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

/**
 * The offset of each key that repeats an earlier scalar key of its mapping, as the `yaml` package's
 * `uniqueKeys` finds them, in one pass with a set per mapping: the package compares each new key
 * with every earlier one, which grows with the square of a mapping's keys.
 */
export function duplicateKeyOffsets(document: Document): number[] {
  const offsets: number[] = [];
  visit(document, {
    Map(_key, map) {
      const seen = new Set<unknown>();
      for (const pair of map.items) {
        // Only scalars compare by value (`===`, under which NaN equals nothing); any other key is its own.
        if (!isScalar(pair.key) || Number.isNaN(pair.key.value)) continue;
        if (seen.has(pair.key.value)) offsets.push(pair.key.range?.[0] ?? 0);
        else seen.add(pair.key.value);
      }
    },
  });
  return offsets;
}

/**
 * The line of a setting in the file, found through an index of each mapping's keys built on first
 * use: looking each key up by scanning its mapping made N unknown keys cost N² steps.
 */
export class DocumentLines {
  readonly #pairs = new WeakMap<YAMLMap, Map<unknown, Pair>>();

  constructor(
    private readonly document: Document,
    private readonly lineCounter: LineCounter,
  ) {}

  /**
   * The line of the key at `path` or, when the file lacks it, of the deepest part of it the file
   * has; `fallback` is where to point instead when `path` itself is absent (a required key left out).
   */
  lineAt(path: readonly PropertyKey[], fallback?: readonly PropertyKey[]): { line?: number } {
    if (fallback !== undefined && this.#nodeAt(path) === undefined) {
      const line = this.lineAt(fallback);
      if (line.line !== undefined) return line;
    }
    // Point at the key rather than its value, which for a nested block starts on a later line.
    for (let length = path.length; length > 0; length--) {
      const parent = this.#nodeAt(path.slice(0, length - 1));
      const last = path[length - 1];
      if (isMap(parent)) {
        const pair = this.#pairOf(parent, last);
        if (pair && isNode(pair.key) && pair.key.range) {
          return lineOf(pair.key.range[0], this.lineCounter);
        }
      }
      const node = this.#childOf(parent, last);
      if (isNode(node) && node.range) return lineOf(node.range[0], this.lineCounter);
    }
    return {};
  }

  /** The node at `path` (aliases not followed), as `document.getIn(path, true)` finds it. */
  #nodeAt(path: readonly PropertyKey[]): unknown {
    let node: unknown = this.document.contents;
    for (const segment of path) {
      node = this.#childOf(node, segment);
      if (node === undefined) return undefined;
    }
    return node;
  }

  #childOf(node: unknown, segment: PropertyKey | undefined): unknown {
    if (isMap(node)) return this.#pairOf(node, segment)?.value ?? undefined;
    if (isSeq(node)) {
      const index = typeof segment === 'string' && segment !== '' ? Number(segment) : segment;
      return typeof index === 'number' && Number.isInteger(index) && index >= 0
        ? node.items[index]
        : undefined;
    }
    return undefined;
  }

  /** The first pair of `map` whose scalar key is `key`. */
  #pairOf(map: YAMLMap, key: unknown): Pair | undefined {
    let pairs = this.#pairs.get(map);
    if (pairs === undefined) {
      pairs = new Map();
      for (const pair of map.items) {
        const value = isScalar(pair.key) ? pair.key.value : pair.key;
        if (!pairs.has(value)) pairs.set(value, pair);
      }
      this.#pairs.set(map, pairs);
    }
    return pairs.get(key);
  }
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

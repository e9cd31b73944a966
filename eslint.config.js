// Type-aware lint: the rules that catch real bugs in async, typed code (floating promises,
// unsafe any at boundaries) plus the project's import and export conventions.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/, top to bottom (docs/architecture.md). A module is a folder (`src/flow/`), a
 * folder inside one that has a row of its own (`src/poller/v1/`), or a file at the top of src/
 * (`src/exporter.ts`); a file belongs to the deepest module it is in. A module imports its own
 * files and the modules of the rows below its own: never a row above, never a sibling in its own
 * row (`poller/v1/` and `poller/v2/` never import each other).
 */
const LAYERS = [
  ['main'],
  ['cli', 'demo'],
  ['simulator'],
  ['exporter'],
  ['server'],
  ['metrics'],
  ['discovery'],
  ['budget'],
  ['poller/jobs'],
  ['poller/v1', 'poller/v2'],
  ['poller'],
  ['flow', 'reload', 'webhooks'],
  ['config'],
  ['sharding'],
  ['snapshot', 'trunk'],
  ['log'],
  ['secrets', 'version'],
];

/** Modules that are programs of their own (the fake Trunk API): they import only these. */
const SEPARATE_PROGRAMS = new Map([['simulator', ['log', 'secrets', 'version']]]);

const SRC = join(import.meta.dirname, 'src');

/** The module of a file under src/ (the deepest LAYERS entry it is in), or undefined outside src/. */
function moduleOf(/** @type {string} */ file) {
  const path = relative(SRC, file);
  if (path.startsWith('..')) return undefined;
  let found;
  for (const module of LAYERS.flat()) {
    const inIt = path === `${module}.ts` || path.startsWith(`${module}/`);
    if (inIt && (found === undefined || module.length > found.length)) found = module;
  }
  return found;
}

/** What a module of src/ is called in a message: `src/poller/v1/`, `src/exporter.ts`. */
function modulePath(/** @type {string} */ module) {
  return existsSync(join(SRC, module)) ? `src/${module}/` : `src/${module}.ts`;
}

/** The modules `module` may import besides itself. */
function importableBy(/** @type {string} */ module) {
  const row = LAYERS.findIndex((names) => names.includes(module));
  return SEPARATE_PROGRAMS.get(module) ?? LAYERS.slice(row + 1).flat();
}

/**
 * Fails lint on an import that points up the layers or across a row, resolved to the module it
 * lands in. Stops lint at once for a folder of src/ that has no row: it would be free to import
 * anything.
 * @type {import('eslint').Rule.RuleModule}
 */
const layerRule = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      layer:
        '{{from}} may not import {{to}}: imports point down the layers only (docs/architecture.md).',
    },
  },
  create(context) {
    const file = context.physicalFilename;
    const from = moduleOf(file);
    if (from === undefined) return {};
    const allowed = importableBy(from);
    /** @param {import('estree').Node} node @param {unknown} source */
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const to = moduleOf(resolve(dirname(file), source));
      if (to === undefined || to === from || allowed.includes(to)) return;
      context.report({
        node,
        messageId: 'layer',
        data: { from: modulePath(from), to: modulePath(to) },
      });
    };
    return {
      ImportDeclaration: (node) => {
        check(node, node.source.value);
      },
      ExportNamedDeclaration: (node) => {
        check(node, node.source?.value);
      },
      ExportAllDeclaration: (node) => {
        check(node, node.source.value);
      },
      ImportExpression: (node) => {
        check(node, node.source.type === 'Literal' ? node.source.value : undefined);
      },
    };
  },
};

const unplaced = readdirSync(SRC)
  .map((name) => name.replace(/\.ts$/, ''))
  .filter((module) => !LAYERS.flat().includes(module));
if (unplaced.length > 0) {
  throw new Error(`eslint.config.js: add ${unplaced.join(', ')} to LAYERS (docs/architecture.md)`);
}

/** Static import and export specifiers of a module's text (`import type` included). */
const STATIC_IMPORT = /^\s*(?:import|export)\b[^;'"]*?(?:\bfrom\s*)?['"]([^'"]+)['"]/gm;

/** @type {Map<string, string[]>} Relative imports per file read from disk, for one lint run. */
const importsOnDisk = new Map();

/**
 * Every import cycle through `file` among the TypeScript files it reaches by relative imports, as
 * lists of paths; read from disk (`text` for the file itself), so a cycle inside one folder counts
 * as much as one across folders, which the layer rule does not see.
 * @param {string} file
 * @param {string} text
 */
function cyclesThrough(file, text) {
  /** @param {string} from @param {string} source */
  const importsOf = (from, source) => {
    const targets = [];
    for (const [, specifier] of source.matchAll(STATIC_IMPORT)) {
      if (specifier === undefined || !specifier.startsWith('.')) continue;
      targets.push(resolve(dirname(from), specifier.replace(/\.js$/, '.ts')));
    }
    return targets;
  };
  /** @param {string} path */
  const next = (path) => {
    if (path === file) return importsOf(file, text);
    let targets = importsOnDisk.get(path);
    if (targets === undefined) {
      let source = '';
      try {
        source = readFileSync(path, 'utf8');
      } catch {
        // An import of a file that does not exist is TypeScript's error to report, not a cycle.
      }
      targets = importsOf(path, source);
      importsOnDisk.set(path, targets);
    }
    return targets;
  };
  /** @type {string[][]} */
  const cycles = [];
  const visited = new Set([file]);
  /** @param {string[]} path */
  const walk = (path) => {
    for (const target of next(path.at(-1) ?? file)) {
      if (target === file) cycles.push([...path, file]);
      else if (!visited.has(target)) {
        visited.add(target);
        walk([...path, target]);
      }
    }
  };
  walk([file]);
  return cycles;
}

/**
 * Fails lint on a module that imports itself through others: `a.ts → b.ts → a.ts`.
 * @type {import('eslint').Rule.RuleModule}
 */
const noImportCycle = {
  meta: { type: 'problem', schema: [], messages: { cycle: 'Import cycle: {{cycle}}.' } },
  create(context) {
    return {
      Program(node) {
        const file = context.physicalFilename;
        for (const cycle of cyclesThrough(file, context.sourceCode.text)) {
          const names = cycle.map((path) => relative(import.meta.dirname, path));
          context.report({ node, messageId: 'cycle', data: { cycle: names.join(' → ') } });
        }
      },
    };
  },
};

export default defineConfig(
  // bin/ and the build's version check are plain JavaScript for any Node.js, outside the typed project.
  {
    ignores: [
      'dist/',
      'bundle/',
      'node_modules/',
      'coverage/',
      'bin/',
      'scripts/check-node-version.mjs',
    ],
  },
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    plugins: { imports: { rules: { 'no-cycle': noImportCycle, layers: layerRule } } },
    rules: {
      'imports/no-cycle': 'error',
      'imports/layers': 'error',
      // The first locale-aware call loads ICU's data: resident memory the exporter has no use for.
      'no-restricted-properties': [
        'error',
        ...['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString', 'localeCompare'].map(
          (property) => ({ property, message: 'Loads ICU (docs/benchmarks.md, Memory).' }),
        ),
      ],
      'no-restricted-globals': [
        'error',
        { name: 'Intl', message: 'Loads ICU (docs/benchmarks.md, Memory).' },
      ],
      // An ES import of node:http reads its lazy exports, which load Node.js's own undici.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: ['node:http', 'http'].map((name) => ({
            name,
            allowTypeImports: true,
            message: "Loads Node.js's own undici: require it (src/server/httpServer.ts).",
          })),
        },
      ],
    },
  },
  {
    // The simulator serves the demo and the tests, and its world reads with fetch() anyway.
    files: ['src/simulator/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': 'off' },
  },
  {
    // A test's output is its verdict and the warning of a skip: a leftover print is noise in every
    // `npm test` run.
    files: ['test/**/*.ts'],
    rules: { 'no-console': ['error', { allow: ['warn'] }] },
  },
  {
    files: ['eslint.config.js', 'vitest.config.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);

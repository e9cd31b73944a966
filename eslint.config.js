// Type-aware lint: the rules that catch real bugs in async, typed code (floating promises,
// unsafe any at boundaries) plus the project's import and export conventions.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/**
 * The layers of src/, top to bottom (docs/architecture.md). A module is a folder (`src/poller/`) or
 * a file at the top of src/ (`src/exporter.ts`). A module imports its own files and the modules of
 * the rows below its own: never a row above, never a sibling in its own row.
 */
const LAYERS = [
  ['main'],
  ['cli', 'demo'],
  ['simulator'],
  ['exporter'],
  ['server'],
  ['metrics'],
  ['discovery'],
  ['poller'],
  ['flow', 'reload', 'budget', 'webhooks'],
  ['config'],
  ['sharding'],
  ['snapshot', 'trunk'],
  ['log'],
  ['secrets', 'version'],
];

/** Modules that are programs of their own (the fake Trunk API): they import only these. */
const SEPARATE_PROGRAMS = new Map([['simulator', ['log', 'secrets', 'version']]]);

/** One no-restricted-imports block per module, a pattern (and message) per module it may not import. */
function layerRules() {
  const entries = readdirSync(join(import.meta.dirname, 'src'), { withFileTypes: true });
  const rootFiles = new Set(
    entries.filter((entry) => entry.isFile()).map((entry) => entry.name.replace(/\.ts$/, '')),
  );
  const placed = LAYERS.flat();
  // A module missing from LAYERS would be free to import anything: lint stops until it has a row.
  const unplaced = entries
    .map((entry) => entry.name.replace(/\.ts$/, ''))
    .filter((module) => !placed.includes(module));
  if (unplaced.length > 0) {
    throw new Error(
      `eslint.config.js: add ${unplaced.join(', ')} to LAYERS (docs/architecture.md)`,
    );
  }
  /** @param {string} module */
  const path = (module) => (rootFiles.has(module) ? `src/${module}.ts` : `src/${module}/`);
  return placed.map((module) => {
    const row = LAYERS.findIndex((names) => names.includes(module));
    const allowed = SEPARATE_PROGRAMS.get(module) ?? LAYERS.slice(row + 1).flat();
    const forbidden = placed.filter((other) => other !== module && !allowed.includes(other));
    // Relative specifiers: `./x/…` from a file at the top of src/, `../x/…` (any depth) below it.
    const up = rootFiles.has(module) ? '\\./' : '(\\.\\./)+';
    return {
      files: [rootFiles.has(module) ? path(module) : `${path(module)}**/*.ts`],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: forbidden.map((other) => ({
              regex: `^${up}${other}${rootFiles.has(other) ? '\\.js$' : '/'}`,
              message: `${path(module)} may not import ${path(other)}: imports point down the layers only (docs/architecture.md).`,
            })),
          },
        ],
      },
    };
  });
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
  { ignores: ['dist/', 'node_modules/', 'coverage/', 'bin/'] },
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
  ...layerRules(),
  {
    files: ['src/**/*.ts'],
    plugins: { imports: { rules: { 'no-cycle': noImportCycle } } },
    rules: { 'imports/no-cycle': 'error' },
  },
  {
    files: ['eslint.config.js', 'vitest.config.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);

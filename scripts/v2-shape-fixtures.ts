// Writes test/trunk/fixtures/v2/*-with-only-required-fields.json and its siblings: for each API v2
// read the exporter makes, the answers Trunk's published definition allows at its edges, built
// from the definition alone and each validated against it with ajv:
//
//   node scripts/v2-shape-fixtures.ts ../shared/trunk-openapi-v2/trunk-openapi-v2.json
//
// - only the required properties at every level (every optional one absent);
// - every property present, optional ones too, and every nullable one null (`type: [..., "null"]`, or an `anyOf` with
//   `{ "type": "null" }`, which the definition uses for a test's `metrics`); where a nullable
//   object holds nullable fields, a second answer keeps the object and nulls its fields;
// - every value of every enum: one row per value of the longest enum, row i taking value i of each.
// Values are the definition's `example`s where it gives one. Each list is one last page
// (`nextCursor: null`, `hasMore: false`), so a walk reads one page; a read of one object gets its
// enum answers as a JSON array of answers. Rows of one page differ in their plain strings and
// integers, so that no walk takes two of them for one row listed twice.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = Readonly<Record<string, unknown>>;

/** How an answer is built: which properties are present, and what a nullable one holds. */
type Shape =
  | { readonly kind: 'required' }
  | { readonly kind: 'nulls'; readonly nullObjects: boolean }
  | { readonly kind: 'enums'; readonly row: number };

/** The reads of the exporter (src/trunk/v2Client.ts), by fixture name and answer schema. */
const READS = [
  { name: 'merge-queues-page', schema: 'MergeQueueList', list: true },
  { name: 'merge-queue', schema: 'MergeQueue', list: false },
  { name: 'pull-requests-page', schema: 'PullRequestList', list: true },
  { name: 'testing-results-page', schema: 'TestingResultList', list: true },
  { name: 'verification-runs-page', schema: 'VerificationRunList', list: true },
  { name: 'verification-run', schema: 'VerificationRun', list: false },
  { name: 'queue-entry-history-page', schema: 'BatchQueueEntryHistoryList', list: true },
  { name: 'tests-page', schema: 'TestCaseList', list: true },
  { name: 'test-collections-page', schema: 'TestCollectionList', list: true },
  { name: 'repositories-page', schema: 'RepositoryList', list: true },
  { name: 'repository', schema: 'Repository', list: false },
] as const;

const specPath = process.argv[2] ?? '../shared/trunk-openapi-v2/trunk-openapi-v2.json';
const outDir = new URL('../test/trunk/fixtures/v2/', import.meta.url);
const spec = JSON.parse(readFileSync(specPath, 'utf8')) as {
  components: { schemas: Record<string, Schema> };
};
const schemas = spec.components.schemas;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function resolve(schema: Schema): Schema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const target = schemas[ref.slice(ref.lastIndexOf('/') + 1)];
  if (target === undefined) throw new Error(`no schema ${ref}`);
  return resolve(target);
}

function list(value: unknown): Schema[] {
  return Array.isArray(value) ? value.filter(isSchema) : [];
}

/** The non-null branches of an `anyOf`/`oneOf`, and whether one branch is null. */
function branches(schema: Schema): { options: Schema[]; nullable: boolean } {
  const all = [...list(schema.anyOf), ...list(schema.oneOf)];
  return {
    options: all.filter((branch) => branch.type !== 'null'),
    nullable: all.some((branch) => branch.type === 'null'),
  };
}

/** The length of the longest enum (or of the widest `oneOf`) reachable from `schema`. */
function widestChoice(schema: Schema, seen = new Set<Schema>()): number {
  const node = resolve(schema);
  if (seen.has(node)) return 1;
  seen.add(node);
  const own = Math.max(
    Array.isArray(node.enum) ? node.enum.length : 1,
    branches(node).options.length,
  );
  const children = [
    ...list(node.allOf),
    ...list(node.anyOf),
    ...list(node.oneOf),
    ...(isSchema(node.items) ? [node.items] : []),
    ...(isSchema(node.properties) ? Object.values(node.properties).filter(isSchema) : []),
  ];
  return Math.max(own, ...children.map((child) => widestChoice(child, seen)));
}

/** A leaf's value: its example where the definition gives one, else the least its type allows. */
function leaf(node: Schema, type: string, row: number): Json {
  const example = node.example;
  if (type === 'string') {
    if (node.format === 'date-time')
      return typeof example === 'string' ? example : '2026-07-28T11:00:00.000Z';
    if (node.format === 'uuid') return '6f1d2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b';
    const text = typeof example === 'string' ? example : 'text';
    if (row === 0) return text;
    // An id in uuid form stays one (Trunk refuses a pull request id that is not, as a 400).
    if (UUID.test(text)) return `${text.slice(0, -4)}${row.toString(16).padStart(4, '0')}`;
    return `${text}-${String(row)}`;
  }
  if (type === 'integer' || type === 'number') {
    const step = typeof node.multipleOf === 'number' ? node.multipleOf : 1;
    let base = typeof example === 'number' ? example : type === 'number' ? 0.5 : 1;
    if (typeof node.minimum === 'number') base = Math.max(base, node.minimum);
    if (typeof node.exclusiveMinimum === 'number')
      base = Math.max(base, node.exclusiveMinimum + step);
    return base + row * step;
  }
  if (type === 'boolean') return typeof example === 'boolean' ? example : true;
  throw new Error(`no value for type ${type}`);
}

function build(schema: Schema, shape: Shape): Json {
  const node = resolve(schema);
  const row = shape.kind === 'enums' ? shape.row : 0;
  if (Array.isArray(node.enum)) {
    const values = node.enum as Json[];
    const value =
      shape.kind === 'enums' ? values[shape.row % values.length] : (node.example as Json);
    return value ?? values[0] ?? null;
  }
  const allOf = list(node.allOf);
  if (allOf.length > 0) return build(allOf[0] ?? {}, shape);
  const { options, nullable } = branches(node);
  if (options.length > 0 || nullable) {
    if (nullable && shape.kind === 'nulls' && !shape.nullObjects) return null;
    const option = options[shape.kind === 'enums' ? shape.row % options.length : 0];
    return option === undefined ? null : build(option, shape);
  }
  const types = Array.isArray(node.type) ? (node.type as string[]) : [node.type as string];
  if (types.includes('null') && shape.kind === 'nulls') return null;
  const type = types.find((name) => name !== 'null') ?? 'object';
  if (type === 'array') return [build(isSchema(node.items) ? node.items : {}, shape)];
  if (type !== 'object') return leaf(node, type, row);
  const properties = isSchema(node.properties) ? node.properties : {};
  const required = Array.isArray(node.required) ? (node.required as string[]) : [];
  let names = Object.keys(properties);
  if (shape.kind === 'required') {
    // `minProperties` beyond the required ones (`TransitionActor`: at least one of two).
    const least = typeof node.minProperties === 'number' ? node.minProperties : 0;
    const optional = names.filter((name) => !required.includes(name));
    names = [...required, ...optional.slice(0, Math.max(0, least - required.length))];
  }
  const value: Record<string, Json> = {};
  for (const name of names) {
    const property = properties[name];
    // A required name the object does not declare may hold anything.
    value[name] = isSchema(property) ? build(property, shape) : 'text';
  }
  return value;
}

/** A list's answer as its last page, with `rows` rows built alike. */
function page(schemaName: string, shapes: readonly Shape[]): Json {
  const envelope = schemas[schemaName] ?? {};
  const items = (resolve(envelope).properties as Record<string, Schema>).data?.items;
  if (!isSchema(items)) throw new Error(`${schemaName} has no data rows`);
  const answer: Record<string, Json> = {
    data: shapes.map((shape) => build(items, shape)),
    nextCursor: null,
    hasMore: false,
  };
  return answer;
}

const require = createRequire(import.meta.url);
const { Ajv2020 } = require('ajv/dist/2020.js') as {
  Ajv2020: new (options: object) => {
    addSchema(schema: object, key: string): void;
    validate(ref: object, data: unknown): boolean;
    errorsText(): string;
  };
};
const ajv = new Ajv2020({
  strict: false,
  allErrors: true,
  validateFormats: true,
  formats: {
    'date-time': (text: string) =>
      !Number.isNaN(Date.parse(text)) && /T.*(Z|[+-]\d\d:\d\d)$/.test(text),
    uuid: (text: string) => UUID.test(text),
    uri: (text: string) => URL.canParse(text),
  },
});
ajv.addSchema({ ...spec, $id: 'https://trunk.example/openapi-v2.json' }, 'spec');

function write(file: string, schemaName: string, answers: readonly Json[], asArray: boolean): void {
  for (const answer of answers) {
    if (!ajv.validate({ $ref: `spec#/components/schemas/${schemaName}` }, answer)) {
      throw new Error(`${file} is not a ${schemaName}: ${ajv.errorsText()}`);
    }
  }
  const body = asArray ? answers : answers[0];
  writeFileSync(new URL(file, outDir), `${JSON.stringify(body, null, 2)}\n`);
  process.stdout.write(`${file}\n`);
}

for (const read of READS) {
  const one = (shapes: readonly Shape[]): Json[] =>
    read.list
      ? [page(read.schema, shapes)]
      : shapes.map((shape) => build(schemas[read.schema] ?? {}, shape));
  write(
    `${read.name}-with-only-required-fields.json`,
    read.schema,
    one([{ kind: 'required' }]),
    false,
  );
  const nulls = one([{ kind: 'nulls', nullObjects: false }]);
  write(`${read.name}-with-every-nullable-field-null.json`, read.schema, nulls, false);
  const nullObjects = one([{ kind: 'nulls', nullObjects: true }]);
  if (JSON.stringify(nullObjects) !== JSON.stringify(nulls)) {
    write(
      `${read.name}-with-nullable-objects-holding-null-fields.json`,
      read.schema,
      nullObjects,
      false,
    );
  }
  const rows = widestChoice(schemas[read.schema] ?? {});
  const shapes = Array.from({ length: rows }, (_, row): Shape => ({ kind: 'enums', row }));
  if (read.list) write(`${read.name}-with-every-enum-value.json`, read.schema, one(shapes), false);
  else write(`${read.name}-answers-with-every-enum-value.json`, read.schema, one(shapes), true);
}

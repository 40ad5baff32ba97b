/**
 * The decisions of a build (docs/api.md "Any users table: the schema"): from the fields a source read (raw
 * columns, none special) to the table a store build takes (store/input.ts `TableInput`). Which
 * field is the key (`--key`, else the schema file's `"key"`, else `id`) and its checks; each
 * column's kind — from the schema file when it lists it, else from the source's own types
 * (PostgreSQL), else inferred from all its values; the fields left out (`--exclude`); the
 * warning for a kept column that looks like a secret; an empty table. Each column is then
 * converted to its kind, and a value that does not fit stops the build with `file:line: reason`.
 */
import { readFileSync } from "node:fs";
import { duplicateKeyReason } from "../ingest/key.ts";
import type { RawColumn } from "../schema/raw-column.ts";
import { IngestError, type RawColumns, fieldList, show, unknownExcludeReason } from "../ingest/records.ts";
import { ConversionError, type ConvertedColumn } from "../kinds/convert.ts";
import { KINDS, convertColumn } from "../kinds/registry.ts";
import { inferKeyKind, inferKind } from "../schema/infer.ts";
import { type ColumnSpec, KEY_KINDS, type SchemaFile, SchemaError, parseSchemaFile } from "../schema/kinds.ts";
import type { ColumnInput, TableInput } from "../store/input.ts";

/**
 * Reads and validates a schema file (`snapshot build --schema F`).
 * @returns its key (when it names one) and its columns, in file order
 * @throws SchemaError naming the file and the problem: unreadable, not JSON, or what
 *   schema/kinds.ts `parseSchemaFile` refuses
 */
export function readSchemaFile(path: string): SchemaFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new SchemaError(`${path}: cannot read the schema file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SchemaError(`${path}: the schema file is not JSON (${(error as Error).message})`);
  }
  try {
    return parseSchemaFile(value);
  } catch (error) {
    if (error instanceof SchemaError) throw new SchemaError(`${path}: ${error.message}`);
    throw error;
  }
}

/** The key column when nothing names one (docs/api.md "Any users table: the schema"). */
export const DEFAULT_KEY = "id";

/** What a build is told about its columns, whatever the source. */
export interface ColumnOptions {
  /** The key column (`--key`); it wins over the schema file's `"key"`. Default: the schema's, else {@link DEFAULT_KEY}. */
  key?: string;
  /** The schema file's content (`--schema`, {@link readSchemaFile}). */
  schema?: SchemaFile;
  /** Fields left out (`--exclude`): each must be a field of the input, and not the key. */
  exclude?: readonly string[];
  /** Build a table of no rows rather than refuse it (`--allow-empty`). */
  allowEmpty?: boolean;
}

/** What a source declares beside its values: its own column kinds (PostgreSQL types), in its column order. */
export interface SourceDeclarations {
  declared?: readonly ColumnSpec[];
}

/** The key column of a build and where its name came from. */
export interface KeyChoice {
  key: string;
  /** `--key`, the schema file's `"key"`, or the default (`id`). */
  from: "option" | "schema" | "default";
}

/** The key a build uses: `--key`, else the schema file's `"key"`, else `id`. */
export function chooseKey(options: Pick<ColumnOptions, "key" | "schema">): KeyChoice {
  if (options.key !== undefined) return { key: options.key, from: "option" };
  if (options.schema?.key !== undefined) return { key: options.schema.key, from: "schema" };
  return { key: DEFAULT_KEY, from: "default" };
}

/**
 * The problems a build's options have before any input is read: an excluded key, a name listed
 * twice. (Whether each name is a field of the input is known only once it is read.)
 * @throws SchemaError naming the problem
 */
export function checkColumnOptions(options: ColumnOptions): void {
  const { key } = chooseKey(options);
  const seen = new Set<string>();
  for (const field of options.exclude ?? []) {
    if (field === key) throw new SchemaError(`--exclude ${show(field)} names the key column; a table cannot be built without its key`);
    if (seen.has(field)) throw new SchemaError(`--exclude names ${show(field)} twice`);
    seen.add(field);
  }
}

/** The reason a key is not a field of the input, worded by where its name came from. */
function missingKeyReason(choice: KeyChoice, fields: readonly string[]): string {
  const list = `fields: ${fieldList(fields)}`;
  if (choice.from === "option") return `--key ${show(choice.key)} is not a field of the input; ${list}`;
  if (choice.from === "schema") return `schema: the key ${show(choice.key)} is not a field of the input; ${list}`;
  const sameButCase = fields.find((f) => f.toLowerCase() === choice.key.toLowerCase());
  const hint = sameButCase !== undefined ? `give --key ${sameButCase}` : "name the key column with --key";
  return `the key ${show(choice.key)} is not a field of the input (${hint}); ${list}`;
}

/** The reason an input without records is refused (without `--allow-empty`). */
export const NO_RECORDS_REASON = "no records (an empty table is built only with --allow-empty)";

/**
 * The words that make a column id look like a secret, as a word or part of one, any case
 * (docs/api.md "Any users table: the schema", leaving columns out).
 */
export const SECRET_WORDS = ["password", "passwd", "secret", "token", "hash", "salt", "otp", "mfa", "ssn"] as const;

/** The first of {@link SECRET_WORDS} that `id` holds (any case), or null. */
export function secretWordIn(id: string): string | null {
  const lower = id.toLowerCase();
  for (const word of SECRET_WORDS) if (lower.includes(word)) return word;
  return null;
}

/** The warning for a kept column that looks like a secret, naming it and `--exclude`. */
export function secretWarning(id: string, word: string): string {
  return `column ${show(id)} looks like a secret (it holds "${word}") and will be served to every client; leave it out with --exclude ${id}`;
}

/** What a build decided: the table, the fields left out, the warnings to print. */
export interface Decision {
  table: TableInput;
  /** The fields left out, in the input's order. */
  excluded: string[];
  /** One line each: a kept column that looks like a secret. */
  warnings: string[];
}

/**
 * Decides the table of a read: the key, each column's kind, and converts every column to it.
 * Releases the raw columns as it goes (`raw.columns` is emptied).
 * @param file the input's name, for errors (`file:line: reason`)
 * @param raw what the source read (every field kept, in its order)
 * @param options the key, schema file, fields left out, whether an empty table is allowed
 * @param source what the source declares of its columns (PostgreSQL types); a schema file wins
 * @returns the table (columns in the input's order, the key among them), the excluded fields and the warnings
 * @throws SchemaError for a key or schema column or excluded name that is not a field of the
 *   input, an excluded key, a key declared of another kind than number or text, an empty input
 *   without columns; IngestError `file:line: reason` for an input without records (line 1) when
 *   an empty table is not allowed, a value that does not fit its column's kind, and a key value
 *   that is null, empty, longer than 256 characters or a duplicate (on the later line)
 */
export function decideColumns(file: string, raw: RawColumns, options: ColumnOptions = {}, source: SourceDeclarations = {}): Decision {
  checkColumnOptions(options);
  const choice = chooseKey(options);
  const key = choice.key;
  const n = raw.rows;
  const kept = raw.columns.map((c) => c.id);
  const fields = [...kept, ...raw.excluded];
  for (const field of options.exclude ?? []) {
    if (!raw.excluded.includes(field)) throw new SchemaError(unknownExcludeReason(field, fields));
  }
  const listed = new Map((options.schema?.columns ?? []).map((spec) => [spec.id, spec]));
  const declared = new Map((source.declared ?? []).map((spec) => [spec.id, spec]));
  const empty = n === 0;
  if (empty && options.allowEmpty !== true) throw new IngestError(file, 1, NO_RECORDS_REASON);
  // A schema column the input lacks is a mistake (a typo would add an all-null column), except
  // for an empty input, whose columns the schema gives.
  const extra: ColumnSpec[] = [];
  for (const spec of options.schema?.columns ?? []) {
    if (fields.includes(spec.id)) continue;
    if (!empty) throw new SchemaError(`schema: ${show(spec.id)} is not a field of the input; fields: ${fieldList(fields)}`);
    extra.push(spec);
  }
  if (empty && kept.length + extra.length === 0) {
    throw new SchemaError(`${file}: no records and no columns: an empty input takes its columns from --schema (or from a CSV header)`);
  }
  if (!kept.includes(key) && !extra.some((spec) => spec.id === key)) throw new SchemaError(missingKeyReason(choice, fields));

  const specOf = (column: RawColumn): ColumnSpec => {
    const given = listed.get(column.id) ?? declared.get(column.id);
    if (given !== undefined) return { ...given, ...(given.values ? { values: [...given.values] } : {}) };
    if (column.id === key) return { id: column.id, kind: inferKeyKind(column.profile) };
    // an empty input infers nothing: its columns are text (a CSV header's fields)
    return { id: column.id, ...inferKind(column.profile, n) };
  };
  const convert = (column: RawColumn, spec: ColumnSpec): ConvertedColumn => {
    try {
      return convertColumn(column, spec);
    } catch (error) {
      if (error instanceof ConversionError) throw new IngestError(file, raw.lines[error.row], error.reason);
      throw error;
    }
  };

  const raws = raw.columns;
  raw.columns = [];
  const out: ColumnInput[] = new Array(raws.length);
  // The key first: its problems are found before the other columns'.
  const keyIndex = raws.findIndex((c) => c.id === key);
  const order = keyIndex < 0 ? raws.map((_, i) => i) : [keyIndex, ...raws.map((_, i) => i).filter((i) => i !== keyIndex)];
  for (const i of order) {
    const column = raws[i];
    const spec = specOf(column);
    if (column.id === key && !KEY_KINDS.includes(spec.kind)) {
      throw new SchemaError(`the key ${show(key)} is ${spec.kind}${spec.values ? ` (${spec.values.join(", ")})` : ""}; a key is a number or text column`);
    }
    const values = convert(column, spec);
    if (column.id === key) checkKey(file, spec, values, raw.lines);
    out[i] = { spec, values };
    // the raw column is not needed any more
    raws[i] = null as unknown as RawColumn;
  }
  for (const spec of extra) {
    if (spec.id === key && !KEY_KINDS.includes(spec.kind)) throw new SchemaError(`the key ${show(key)} is ${spec.kind}; a key is a number or text column`);
    out.push({ spec: { ...spec }, values: KINDS[spec.kind].writer(spec, 0).finish() });
  }
  const warnings: string[] = [];
  for (const { spec } of out) {
    const word = secretWordIn(spec.id);
    if (word !== null) warnings.push(secretWarning(spec.id, word));
  }
  return { table: { rows: n, columns: out, key }, excluded: [...raw.excluded], warnings };
}

/**
 * Checks the key column's values by its kind (kinds/key.ts; docs/api.md "Any users table: the schema", the
 * key): none null, a text non-empty and at most 256 characters, all distinct (`-0` is made `0`,
 * the same key). The first problem in input order is reported, on its line (a duplicate on the
 * later of its two lines).
 * @throws IngestError `file:line: reason`
 */
function checkKey(file: string, spec: ColumnSpec, values: ConvertedColumn, lines: Uint32Array): void {
  const role = KINDS[spec.kind].key;
  if (role === null) throw new Error(`checkKey: a ${spec.kind} key`);
  const problem = role.check(spec.id, values);
  if (problem === null) return;
  throw new IngestError(file, lines[problem.row], "reason" in problem ? problem.reason : duplicateKeyReason(problem.value, lines[problem.firstRow]));
}

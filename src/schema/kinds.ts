/**
 * A snapshot's schema as data (docs/api.md "Any users table: the schema"): an ordered list of columns, each
 * with a column kind, which one is the key, and which partitions the rows. Everything per column
 * — the store's sections, the JSON record layout, request validation, the OpenAPI schemas, the
 * demo's columns — is derived from this table.
 */

/** The column kinds (docs/api.md): how a column's values are stored, ordered, filtered and written. */
export const COLUMN_KINDS = ["number", "text", "enum", "date", "datetime", "boolean", "json"] as const;

/** A column kind. */
export type ColumnKind = (typeof COLUMN_KINDS)[number];

/** One column of a schema. */
export interface ColumnSpec {
  /** The column id: `[A-Za-z_][A-Za-z0-9_]{0,63}` ({@link COLUMN_ID}). */
  id: string;
  kind: ColumnKind;
  /**
   * An enum's values in their order (the sort order): declared in a schema file, or, when
   * inferred, the distinct values in collation order. Absent for the other kinds.
   */
  values?: string[];
  /**
   * True on an enum whose values were inferred from the data rather than declared (a schema
   * file, a database's enum type): kept in the snapshot's header, so that an access role that
   * sees some rows is told the values present in its rows alone (docs/api.md "Access control"); absent on every other column.
   */
  inferred?: true;
}

/** A column as answers show it (`/schema`, the OpenAPI document): its id, kind and an enum's values, without {@link ColumnSpec.inferred}. */
export function shownSpec(spec: ColumnSpec): ColumnSpec {
  return spec.values === undefined ? { id: spec.id, kind: spec.kind } : { id: spec.id, kind: spec.kind, values: spec.values };
}

/**
 * A schema: the columns in order (the input's field order), the key column, and the column that
 * partitions the rows (docs/api.md "Any users table: the schema").
 */
export interface Schema {
  columns: ColumnSpec[];
  /**
   * The key column's id: a `number` or `text` column whose values are unique and never null;
   * store rows are numbered in its order, and it breaks every order's ties (docs/api.md "Any users table: the schema").
   */
  key: string;
  /**
   * The enum column whose values partition the rows (per-value permutations of the text columns,
   * posting lists grouped by value), chosen by the store build from the columns' kinds and
   * statistics (store/build.ts `choosePartition`); null when no column qualifies.
   */
  partition: string | null;
}

/** What a column id must look like (docs/api.md). */
export const COLUMN_ID = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** The spec of column `id` in `schema`, or undefined (also for a non-string). */
export function columnSpec(schema: Schema, id: unknown): ColumnSpec | undefined {
  if (typeof id !== "string") return undefined;
  for (const c of schema.columns) if (c.id === id) return c;
  return undefined;
}

/**
 * Most values an enum column may have to partition the rows (store/build.ts `choosePartition`):
 * each value is a group of every text column's permutation and of every posting list, and a set
 * of groups is a 32-bit mask (null is a group of its own).
 */
export const MAX_PARTITION_VALUES = 16;

/** Most distinct values an inferred enum may have (docs/api.md). */
export const MAX_INFERRED_ENUM_VALUES = 32;

/** Rows per distinct value an inferred enum needs at least (docs/api.md: at most one distinct value per 10 rows). */
export const MIN_ROWS_PER_ENUM_VALUE = 10;

/** Most values a declared enum may have (codes are one byte, and code 0 is null). */
export const MAX_ENUM_VALUES = 255;

/** Why a schema (or a schema file) is refused. */
export class SchemaError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SchemaError";
  }
}

/**
 * A schema file's content (`snapshot build --schema F`, docs/api.md "Any users table: the schema"): the key
 * column, when it names one, and the columns it declares, in the file's order.
 */
export interface SchemaFile {
  /** The key column (`"key"`), or undefined: then `--key`, else `id`. */
  key?: string;
  /** The columns it declares: each an input field's kind (an enum with its values). */
  columns: ColumnSpec[];
}

/** True for the kinds whose spec lists the column's values (`values`: an enum's). */
export function listsValues(kind: ColumnKind): boolean {
  return kind === "enum";
}

/** The kinds a key column may have (docs/api.md "Any users table: the schema", the key). */
export const KEY_KINDS: readonly ColumnKind[] = ["number", "text"];

/**
 * Validates a schema file's content (`snapshot build --schema F`):
 * `{"key": "user_id", "columns":[{"id":"created_at","kind":"datetime"},{"id":"role","kind":"enum","values":[…]}]}`.
 * `"key"` is optional; `"columns"` lists any fields of the input, each with its kind (no column
 * is special: `status` may be any enum, `email` any kind).
 * @returns the key (when given) and the columns, in file order
 * @throws SchemaError naming the first problem: not an object, a member other than `key` and
 *   `columns`, a key that is not a column id or is listed with a kind other than number or text,
 *   a column without a valid id, an unknown kind, an enum without values (or with repeated, empty
 *   or more than 255 values), `values` on another kind, a column listed twice
 */
export function parseSchemaFile(value: unknown): SchemaFile {
  if (typeof value !== "object" || value === null || Array.isArray(value) || !Array.isArray((value as { columns?: unknown }).columns)) {
    throw new SchemaError('a schema file is a JSON object {"key"?: "…", "columns": [{"id": …, "kind": …}, …]}');
  }
  for (const member of Object.keys(value)) {
    if (member !== "key" && member !== "columns") throw new SchemaError(`a schema file has the members "key" and "columns" only (got ${JSON.stringify(member)})`);
  }
  const key = (value as { key?: unknown }).key;
  if (key !== undefined && (typeof key !== "string" || !COLUMN_ID.test(key))) throw new SchemaError(`the key ${JSON.stringify(key)} must be a column id ([A-Za-z_][A-Za-z0-9_]{0,63})`);
  const seen = new Set<string>();
  const columns: ColumnSpec[] = [];
  for (const [i, item] of ((value as { columns: unknown[] }).columns).entries()) {
    const at = `columns[${i}]`;
    if (typeof item !== "object" || item === null || Array.isArray(item)) throw new SchemaError(`${at} must be an object {"id", "kind"}`);
    const { id, kind, values } = item as { id?: unknown; kind?: unknown; values?: unknown };
    if (typeof id !== "string" || !COLUMN_ID.test(id)) throw new SchemaError(`${at}: the id ${JSON.stringify(id)} must match [A-Za-z_][A-Za-z0-9_]{0,63}`);
    if (seen.has(id)) throw new SchemaError(`${at}: column "${id}" is listed twice`);
    seen.add(id);
    if (typeof kind !== "string" || !(COLUMN_KINDS as readonly string[]).includes(kind)) {
      throw new SchemaError(`${at}: column "${id}" has kind ${JSON.stringify(kind)}; kinds are ${COLUMN_KINDS.join(", ")}`);
    }
    const spec: ColumnSpec = { id, kind: kind as ColumnKind };
    if (listsValues(spec.kind)) {
      if (!Array.isArray(values) || values.length === 0) throw new SchemaError(`${at}: enum column "${id}" needs a non-empty "values" list`);
      if (values.length > MAX_ENUM_VALUES) throw new SchemaError(`${at}: enum column "${id}" has ${values.length} values; at most ${MAX_ENUM_VALUES}`);
      const distinct = new Set<string>();
      for (const v of values) {
        if (typeof v !== "string" || v === "") throw new SchemaError(`${at}: enum column "${id}" has a value ${JSON.stringify(v)}; values are non-empty strings`);
        if (distinct.has(v)) throw new SchemaError(`${at}: enum column "${id}" lists "${v}" twice`);
        distinct.add(v);
      }
      spec.values = [...(values as string[])];
    } else if (values !== undefined) {
      throw new SchemaError(`${at}: only enum columns have "values" ("${id}" is ${kind})`);
    }
    if (id === key && !KEY_KINDS.includes(spec.kind)) throw new SchemaError(`${at}: column "${id}" is the key, which is a number or text column (not ${kind})`);
    columns.push(spec);
  }
  return key === undefined ? { columns } : { key, columns };
}

/**
 * What a column kind is, as a module (docs/api.md "Any users table: the schema"): how a column of
 * the kind is converted from what a source read, built into the store, written into the JSON
 * records, ordered, and how the column tests its operators compile to (src/query/types.ts
 * `ColumnTest`) are evaluated into row sets; and everything else that differs by kind — its facet
 * shape, what it does as the key, what one of its values is outside the store (a live replica's
 * changed rows, compaction), a claim's conversion, PostgreSQL's types and text, its OpenAPI
 * schema. One {@link KindModule} per kind, listed in registry.ts; the rest of the code knows
 * kinds only through it (scripts/kind-names.ts finds the code that tests a kind by its name).
 */
import type { Bitmap } from "../bits/bitmap.ts";
import type { RawColumn } from "../schema/raw-column.ts";
import type { ConvertedColumn } from "./convert.ts";
import type { ColumnKind, ColumnSpec } from "../schema/kinds.ts";
import type { ByteColumn } from "../bits/byte-column.ts";
import type { TrigramIndex } from "../bits/trigram-index.ts";
import type { Work } from "../bits/work.ts";

/** AG Grid text filter types (docs/api.md "Filter model", `text`). Compared on folded strings. */
export type TextOp =
  | "contains"
  | "notContains"
  | "equals"
  | "notEqual"
  | "startsWith"
  | "endsWith"
  | "blank"
  | "notBlank";

/**
 * A test on one column, in the terms its kind evaluates: what the operator registry
 * (operators.ts) compiles an AG Grid model or a GET `filter[col]` into. Values are the column's
 * stored doubles (numbers; day numbers for `date`; UTC milliseconds for `datetime`; codes for
 * `enum` and `boolean`, see src/kinds).
 * - `range`: non-null values in the interval (`lo`/`hi` may be ±Infinity; open ends excluded);
 *   `negate`: the non-null values outside it (null never matches either: AG Grid's rule that
 *   null passes only `blank`).
 * - `null`: the null rows (`negate`: the non-null ones).
 * - `text`: an AG Grid text condition on the value's output string, folded (docs/api.md
 *   "Filtering on any column"); null passes only `notEqual`, `notContains` and `blank`.
 * - `set`: the value's folded output string is one of `values` (folded, distinct); `nulls`:
 *   null rows match too (and, on text columns, blank values).
 */
export type ColumnTest =
  | { op: "range"; lo: number; loOpen: boolean; hi: number; hiOpen: boolean; negate: boolean }
  | { op: "null"; negate: boolean }
  | { op: "text"; type: TextOp; value: string }
  | { op: "set"; values: string[]; nulls: boolean };

/**
 * A column as its kind built it (src/kinds): the parts its kind and role list
 * ({@link KindModule.parts}) are set, the others null. Rows are store rows, numbered in the key's
 * order. Stored values are doubles: numbers; day numbers for `date`; UTC milliseconds for
 * `datetime`; value codes (i + 1 for `values[i]`) for `enum`; 1 false, 2 true for `boolean`.
 *
 * The key column (`key` true) is unique and never null, and row r holds its (r + 1)-th smallest
 * value: its order is the row order itself, so it keeps no rank or permutation (`rankByRow`,
 * `rowsByValue`, `rankStarts` null; rank of row r is r + 1, rank r's rows start at r - 1).
 */
export interface StoredColumn {
  spec: ColumnSpec;
  /** True for the store's key column (docs/api.md "Any users table: the schema"). */
  key: boolean;
  /** Each row's rank: 0 for null, r ≥ 1 for the r-th smallest distinct value (text: collation rank); length rowCount. Null for the key and `json`. */
  rankByRow: Uint32Array | null;
  /** Row numbers by value ascending, null rows first, ties by row ascending; length rowCount. Null for the key and `json`. */
  rowsByValue: Uint32Array | null;
  /** Where each rank's rows start in `rowsByValue` (rank 0 = null at 0); length d + 2 (d distinct values), the last is rowCount. Null for the key and `json`. */
  rankStarts: Uint32Array | null;
  /** The distinct non-null stored values ascending, rank r is `distinct[r - 1]`; length d (rowCount for a number key). Set for number, date, datetime, enum, boolean. */
  distinct: Float64Array | null;
  /** `text`: each row's folded value (collation.ts `fold`; "" for null), UTF-8, back to back. */
  folded: Uint8Array | null;
  /** `text`: row r's folded value is `folded[foldedOffsets[r] .. foldedOffsets[r+1])`; length rowCount + 1, in bytes. */
  foldedOffsets: Uint32Array | null;
  /** `text`: bitmap of the blank rows (null, or a value whose `trim()` is empty; AG Grid's isBlank); ceil(rowCount / 32) words. */
  blank: Uint32Array | null;
  /**
   * Trigram posting lists over each row's folded output string, grouped by the store's partition
   * codes (store/trigrams.ts): what substring filters and search terms of 3+ code points read.
   * Set for `text` columns and for the key (a number key over its decimal form).
   */
  trigrams: TrigramIndex | null;
  /**
   * `rowsByValue` stably partitioned by the store's partition codes (the rows of code 0 in value
   * order, then code 1's…; partition p starts at the sum of the partition's counts before p);
   * length rowCount. Set for `text` columns (not the key) of a partitioned store.
   */
  rowsByValueByPartition: Uint32Array | null;
  /**
   * Rows by absolute value ascending, then by signed value, then by row (AG Grid's `absolute`
   * sort); length rowCount. Set for `number` columns holding a negative value.
   */
  rowsByAbsValue: Uint32Array | null;
  /**
   * A text key's values as given, UTF-8, back to back in row order (so ascending by code point):
   * what finds a key's row by binary search (a live replica's changes, docs/live-replicas.md).
   */
  raw: Uint8Array | null;
  /** A text key's row r value is `raw[rawOffsets[r] .. rawOffsets[r+1])`; length rowCount + 1, in bytes. */
  rawOffsets: Uint32Array | null;
}

/** One value's test (kind.ts {@link KindModule.valueTest}): the value, and its folded output string when the caller has it. */
export type ValueTest = (value: number | string | null, folded?: string) => boolean;

/** The AG Grid filter types (`filterType`) a column may take (docs/api.md "Filter model"). */
export type FilterType = "text" | "number" | "date" | "set";

/** The fields of a {@link TrigramIndex}, each a part `trigrams.<field>` of a column that has one. */
const TRIGRAM_FIELDS = ["keys", "counts", "groupCounts", "refs", "bitmaps", "gaps"] as const;

/** A part of a {@link StoredColumn} that holds a typed array (a snapshot section `col.<id>.<part>`). */
export type StoredPart =
  | "rankByRow"
  | "rowsByValue"
  | "rankStarts"
  | "distinct"
  | "folded"
  | "foldedOffsets"
  | "blank"
  | "rowsByValueByPartition"
  | "rowsByAbsValue"
  | "raw"
  | "rawOffsets"
  | `trigrams.${(typeof TRIGRAM_FIELDS)[number]}`;

/** The parts of a column's trigram index, in snapshot order. */
export const TRIGRAM_PARTS: readonly StoredPart[] = TRIGRAM_FIELDS.map((f) => `trigrams.${f}` as const);

/** Every part, in snapshot order (a column's sections are written in this order). */
export const ALL_PARTS: readonly StoredPart[] = [
  "rankByRow",
  "rowsByValue",
  "rankStarts",
  "distinct",
  "folded",
  "foldedOffsets",
  "blank",
  "rowsByValueByPartition",
  "rowsByAbsValue",
  "raw",
  "rawOffsets",
  ...TRIGRAM_PARTS,
];

/** The element type of each part, as the snapshot format names them. */
export const PART_TYPES: Record<StoredPart, "u8" | "u32" | "f64"> = {
  rankByRow: "u32",
  rowsByValue: "u32",
  rankStarts: "u32",
  distinct: "f64",
  folded: "u8",
  foldedOffsets: "u32",
  blank: "u32",
  rowsByValueByPartition: "u32",
  rowsByAbsValue: "u32",
  raw: "u8",
  rawOffsets: "u32",
  "trigrams.keys": "f64",
  "trigrams.counts": "u32",
  "trigrams.groupCounts": "u32",
  "trigrams.refs": "u32",
  "trigrams.bitmaps": "u32",
  "trigrams.gaps": "u8",
};

/** The typed array of `part` in `column`, or null when the column lacks it. */
export function partOf(column: StoredColumn, part: StoredPart): Uint8Array | Uint32Array | Float64Array | null {
  if (part.startsWith("trigrams.")) {
    const index = column.trigrams as unknown as Record<string, Uint8Array | Uint32Array | Float64Array> | null;
    return index === null ? null : index[part.slice(9)];
  }
  return column[part as Exclude<StoredPart, `trigrams.${string}`>];
}

/** Sets `part` of `column` (a trigram part creates the index object on first use; the loader fills every part). */
export function setPart(column: StoredColumn, part: StoredPart, data: Uint8Array | Uint32Array | Float64Array): void {
  if (part.startsWith("trigrams.")) {
    column.trigrams ??= {} as TrigramIndex;
    (column.trigrams as unknown as Record<string, unknown>)[part.slice(9)] = data;
  } else (column as unknown as Record<string, unknown>)[part] = data;
}

/** A column with every part null: what a kind fills in. */
export function emptyStoredColumn(spec: ColumnSpec, key: boolean): StoredColumn {
  return {
    spec,
    key,
    rankByRow: null,
    rowsByValue: null,
    rankStarts: null,
    distinct: null,
    folded: null,
    foldedOffsets: null,
    blank: null,
    trigrams: null,
    rowsByValueByPartition: null,
    rowsByAbsValue: null,
    raw: null,
    rawOffsets: null,
  };
}

/** A GET `filter[col]=value` read by a kind: the tests (all must hold) and the normalized echo. */
export interface GetFilter {
  tests: ColumnTest[];
  /** The value as `meta.filters` echoes it (docs/api.md "GET /api/users"). */
  echo: string;
}

/** The rows' partition codes a build hands each column (store/build.ts): a column's trigram lists and per-partition permutation are grouped by them. */
export interface PartitionCodes {
  /** Each store row's code (the partition column's rank: 0 null, r its r-th distinct value); length rowCount. */
  codes: Uint8Array;
  /** Rows per code; length S, the number of groups (at most 32). */
  counts: Uint32Array;
}

/** What a column's build needs besides its values. */
export interface BuildContext {
  /** Store row → input position (rows in key order); null when input order is key order. */
  order: Uint32Array | null;
  /** True when the column is the key: its values are unique and never null, and rows are in its order. */
  key: boolean;
  /** The store's partition codes, or null when the rows are not partitioned. */
  partition: PartitionCodes | null;
}

/**
 * What one value of a kind is outside the store's columns: what {@link KindModule.valueAt} gives,
 * {@link KindModule.valueTest} tests and a live replica keeps for a changed row
 * (docs/live-replicas.md). `double`: a stored double, NaN for null (numbers; day numbers for
 * `date`; UTC milliseconds for `datetime`; value codes for `enum` and `boolean`). `string`: the
 * string as given, null for null (`text`). null: the kind's values live in the records alone
 * (`json`).
 */
export type ValueType = "double" | "string" | null;

/**
 * The JSON a kind's values take in the records (store/records.ts): how a record's member is
 * skipped (store/record-fields.ts) and how a CSV export writes it (store/rows-export.ts,
 * docs/api.md "Export"). `string`: a JSON string or null (text, enum, date, datetime: CSV writes
 * the string's characters). `bare`: a number, `true`, `false` or null (number, boolean: CSV writes
 * the JSON text). `any`: any JSON value, arrays and objects too (json: CSV writes its JSON text).
 */
export type RecordValue = "string" | "bare" | "any";

/**
 * A converted column (convert.ts) of a kind written row by row, rows in order: what compaction
 * rebuilds a table from (live/compact.ts), and an empty table's column. A kind whose
 * {@link ValueType} is `double` takes each row's stored double (NaN for null); every other kind
 * takes each row's JSON literal as the records hold it (`bytes[start .. end)`, `null` for null).
 */
export type ColumnWriter =
  | {
      from: "double";
      /** Appends the next row's stored double (NaN for null). */
      put(stored: number): void;
      /** The column of the rows put (as many as the writer was made for). */
      finish(): ConvertedColumn;
    }
  | {
      from: "literal";
      /**
       * Appends the next row's value from its JSON literal `bytes[start .. end)`.
       * @throws SyntaxError for a literal that is not JSON (a corrupt record)
       */
      put(bytes: Uint8Array, start: number, end: number): void;
      /** The column of the rows put (as many as the writer was made for). */
      finish(): ConvertedColumn;
    };

/**
 * The first problem of a key column's values in input order ({@link KeyRole.check}): a row whose
 * value cannot be a key (null, and for text empty or too long) with the reason, or a row whose
 * value an earlier row (`firstRow`) holds already, with that value.
 */
export type KeyProblem = { row: number; reason: string } | { row: number; firstRow: number; value: number | string };

/** What a kind that may be the key does as the key (docs/api.md "Any users table: the schema"). */
export interface KeyRole {
  /**
   * Store row → input position in ascending key order, or null when the input is in that order
   * already (the identity): rows are numbered in key order (store/build.ts).
   * @param values the key column's values in input order (never null, unique: checked first)
   * @returns a permutation of 0…n-1, or null
   * @throws RangeError on a duplicate key (`duplicate key 42`)
   */
  order(values: ConvertedColumn): Uint32Array | null;
  /**
   * The first problem of the key's values in input order, or null when every value may be a key
   * and all are distinct. A number key's `-0` is made `0` in `values` (one key).
   * @param id the key column's id, for the reasons (`key "id" is null or missing …`)
   */
  check(id: string, values: ConvertedColumn): KeyProblem | null;
}

/**
 * The shape of a column's facet (docs/api.md "Facets"): `range` — the smallest and largest
 * matching value and the null count (number, date, datetime); `codes` and `values` — the
 * matching values listed with their counts, most frequent first, counted by each row's rank code
 * (enum, boolean: few values) or by each matching row's text (text). Null for a kind that has no
 * facet (json: a facet on it is a 400).
 */
export type FacetShape = "range" | "codes" | "values" | null;

/** One column kind as a module. */
export interface KindModule {
  kind: ColumnKind;
  /** What a facet of a column of the kind answers ({@link FacetShape}); what the facet code asks instead of the kind's name. */
  facet: FacetShape;
  /** False for `json` only (docs/api.md: sorting a json column is a 400). */
  sortable: boolean;
  /** True when AG Grid's `absolute` sort type orders the kind's values by magnitude (number); ignored for the others (docs/api.md "Ordering"). */
  absoluteSort: boolean;
  /** True for the kinds a search term looks into (docs/api.md "Global search": text and enum columns, and the key). */
  searchable: boolean;
  /**
   * True for the searchable kinds whose per-row values the search index holds (text: store/types.ts
   * `SearchIndex`); false for those a search term is decided on once per distinct value (enum).
   */
  searchIndexed: boolean;
  /** What a column of the kind does as the key, or null for the kinds that cannot be the key (docs/api.md "Any users table: the schema": number or text). */
  key: KeyRole | null;
  /** What one value of the kind is outside the store's columns ({@link ValueType}). */
  valueType: ValueType;
  /** The JSON the kind's values take in the records ({@link RecordValue}). */
  recordValue: RecordValue;
  /**
   * Row `row`'s value of a converted column of the kind, as its {@link ValueType} says (a double,
   * NaN for null; a string, null for null); null for a kind whose values live in the records alone.
   */
  valueAt(converted: ConvertedColumn, row: number): number | string | null;
  /** An empty converted column of the kind to be written `rows` rows, row by row ({@link ColumnWriter}). */
  writer(spec: ColumnSpec, rows: number): ColumnWriter;
  /**
   * The relative work of building a column from `converted` (a text column sorts and indexes its
   * bytes; an ordered one sorts its doubles): what spreads a build's columns over its workers
   * (store/build.ts). No unit: only compared between columns.
   */
  buildWork(converted: ConvertedColumn): number;
  /**
   * For a kind whose values may partition the rows (enum: store/build.ts `choosePartition`), the
   * distinct non-null values of a converted column; null for the kinds that never partition.
   */
  partitionValues: ((converted: ConvertedColumn) => number) | null;
  /** The AG Grid filter types the kind takes (empty for `json`). */
  filterTypes: readonly FilterType[];
  /**
   * The parts of a {@link StoredColumn} the kind always sets for a column in `role` (the others
   * stay null, but for the optional ones the build adds from the data: `rowsByValueByPartition`,
   * `rowsByAbsValue`).
   */
  parts(role: { key: boolean }): readonly StoredPart[];
  /**
   * Converts a column's raw values (as read: JSON values or CSV text) to the kind's typed form,
   * rows in input order (docs/api.md "Any users table: the schema": value syntax and refusals).
   * @throws ConversionError (convert.ts) for the first value that does not fit the kind
   */
  convert(raw: RawColumn, spec: ColumnSpec): ConvertedColumn;
  /**
   * Builds the stored column from the column's values in input order (n rows).
   * @throws RangeError when the column is the key and its values are not unique (the source checks first)
   */
  build(spec: ColumnSpec, converted: ConvertedColumn, context: BuildContext): StoredColumn;
  /**
   * Every row's value as its JSON text (`null` for null), UTF-8, in input order; n values: what
   * the records hold (docs/api.md: numbers and booleans as JSON, dates as `YYYY-MM-DD`, date-times
   * as `YYYY-MM-DDTHH:mm:ss.sssZ`, enum and text as given, json as given).
   */
  literals(spec: ColumnSpec, converted: ConvertedColumn): ByteColumn;
  /**
   * The rows of `column` (rowCount rows) that pass `test`, as a new bitmap: by its order (slices
   * of `rowsByValue` for the values that pass) or a scan. Work that pauses between pieces of
   * about bits/work.ts `PIECE` rows or values (a long scan is run in slices).
   * @throws Error for a test the kind does not take (the parsers never build one)
   */
  evaluate(column: StoredColumn, test: ColumnTest, rowCount: number): Work<Bitmap>;
  /** Rows (or values) `evaluate` visits for `test`: the planner's size of the work (engine/planner.ts). */
  work(column: StoredColumn, test: ColumnTest, rowCount: number): number;
  /**
   * Rows `evaluate` is expected to return for `test`: exact where the order tells (ranges, nulls,
   * values), else a guess from `rowCount` (engine/planner.ts reads it).
   */
  estimate(column: StoredColumn, test: ColumnTest, rowCount: number): number;
  /**
   * For kinds whose values are ranked (every kind but text and json): which ranks pass `test`,
   * index = rank (0 = null), 1 for a pass; length d + 1. What a test on the partition column
   * becomes (a set of partition codes). Null for the other kinds.
   */
  passingRanks: ((column: StoredColumn, test: ColumnTest) => Uint8Array) | null;
  /**
   * A GET `filter[col]` value (non-empty, at most 256 characters) as tests, a reason it is
   * refused (a 400), or null for no filter (`,` alone on a range kind).
   * @param key true when the column is the key (a text key takes whole values, not a substring)
   */
  getFilter(spec: ColumnSpec, value: string, key: boolean): GetFilter | string | null;
  /**
   * The stored value interval `[start, end)` a UTC day number covers (date: [day, day + 1);
   * datetime: milliseconds): what a date filter compares. Null for kinds without dates.
   */
  dayInterval: ((day: number) => [number, number]) | null;
  /**
   * A set filter's value as the folded output string it matches (docs/api.md "Filter
   * model"), or the reason it is refused (a value an enum or boolean column cannot hold, a
   * number column's non-number).
   */
  setValue(spec: ColumnSpec, text: string): string | { reason: string };
  /** What a GET `filter[col]` value means on the kind, for the OpenAPI document (null for json). */
  getFormDoc(key: boolean): string | null;
  /**
   * One stored value (a double: see {@link StoredColumn}) as its JSON text, as the records hold
   * it (number, `"YYYY-MM-DD"`, ISO date-time, enum string, `true`/`false`): facets' `min`,
   * `max` and `values`. Null for `text` and `json` (their values are not doubles).
   */
  valueJson: ((spec: ColumnSpec, stored: number) => string) | null;
  /**
   * `test` compiled into a test of one value, with the same rules as {@link evaluate} applies to a
   * stored column: a double (NaN for null) for the ordered kinds, a string (null for null) for
   * `text`; `folded`, when the caller keeps it, is the value's output string folded. What a live
   * replica's changed rows are tested with (docs/live-replicas.md), compiled once per test.
   * @throws Error for a test the kind does not take (json)
   */
  valueTest(spec: ColumnSpec, test: ColumnTest): ValueTest;
  /** The output string of a stored value (what text filters compare, docs/api.md); null for `text` and `json`. */
  format: ((spec: ColumnSpec, stored: number) => string) | null;
  /** The JSON Schema of one value (OpenAPI); `key`: the key column, never null. */
  jsonSchema(spec: ColumnSpec, key: boolean): Record<string, unknown>;
  /**
   * A credential's claim value used in a role's filter on a column of the kind (docs/api.md
   * "Access control", claims) as the filter value it stands for, canonical: a finite number for
   * `number` (a numeric string converted, `-0` as 0), a string for the others (`boolean`: `"true"`
   * or `"false"` from a boolean or those words in any case); null when the kind cannot take it
   * (null, an object, an array, a number beyond a double's range, a non-numeric string for a
   * number column, a number for a text column…: a 403 naming the claim).
   */
  claimValue(spec: ColumnSpec, value: unknown): number | string | null;
  /** What {@link claimValue} takes, for the 403's detail: `a finite number or a numeric string`. */
  claimForm: string;
  /** A value {@link claimValue} gives, standing for a claim while a policy is checked without a credential (access/policy.ts). */
  example(spec: ColumnSpec): number | string;
  /**
   * A value of the kind as PostgreSQL's text output (the session in UTC and ISO dates) turned into
   * the JSON value a build from the table reads (`row_to_json`): a number, a boolean, a parsed
   * json value; null for the kinds whose text is the value itself (text, enum, date, datetime).
   * What a live replica's changes are read with (publish/pg-changes.ts).
   * @throws RangeError for a number a double would round (its reason)
   * @throws SyntaxError for json text that does not parse
   */
  postgresValue: ((text: string) => unknown) | null;
  /**
   * The PostgreSQL types (pg_type OIDs) whose columns are of this kind when a table is read
   * (docs/api.md "Any users table: the schema": integer and numeric types → number, text types and uuid →
   * text…); an enum type is an `enum` whatever its OID. Empty for kinds no built-in type maps to.
   */
  postgresTypes: readonly number[];
}

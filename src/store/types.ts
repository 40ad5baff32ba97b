/**
 * The columnar in-memory store: typed arrays built once by the snapshot builder and viewed
 * straight out of the mapped snapshot file at start-up. Rows are numbered 0…rowCount-1 in
 * ascending key order (docs/api.md "Any users table: the schema"), so row order is key order and a row number is its
 * key's rank: every order breaks its ties by row number.
 */
import type { StoredColumn } from "../kinds/kind.ts";
import { KINDS } from "../kinds/registry.ts";
import type { ColumnSpec, Schema } from "../schema/kinds.ts";
import type { TrigramIndex } from "../bits/trigram-index.ts";

export type { TrigramIndex };

/**
 * Every row's JSON record, row-major: what a page body is assembled from, one bulk copy a row.
 * The raw (unfolded) text values live only here, as the records' string literals. The records
 * are cut into chunks of 2^chunkShift rows, each under 4 GiB (the largest typed array the
 * runtime allows), so that no 32-bit offset limits the row count (store/records.ts).
 */
export interface Records {
  /** Rows per chunk, as a power of two: chunk c holds rows [c << chunkShift, (c + 1) << chunkShift). */
  chunkShift: number;
  /**
   * Each chunk's records `{"<col>":…,…}` back to back, exactly as `JSON.stringify` writes a
   * record of every column in schema order (no white space), UTF-8;
   * ceil(rowCount / 2^chunkShift) chunks (at least one), each under 4 GiB.
   */
  chunks: Uint8Array[];
  /**
   * Row r's record is `chunks[c][offsets[r + c] .. offsets[r + c + 1])` with c = r >>> chunkShift:
   * each chunk's offsets start at 0 and end at its length; length rowCount + chunks.length, in bytes.
   */
  offsets: Uint32Array;
  /**
   * Response assembly area in the same ArrayBuffer as `chunks[0]`, so that a body of rows of one
   * chunk is assembled with `copyWithin` (a native memmove) rather than a JS byte loop: zeros in
   * the file, written over by every response (a private mapping: the file is never changed). Any
   * length; a body that does not fit is written to a heap buffer instead (store/rows-json.ts).
   */
  scratch: Uint8Array;
}

/**
 * Records of rows beyond a store's own: a live replica's changed rows (live/delta.ts), row
 * `first + d` holding `bytes[offsets[d] .. offsets[d + 1])` (a record as the store's are).
 */
export interface ExtraRecords {
  /** The first row number beyond the store: its row count, N. */
  first: number;
  bytes: Uint8Array;
  /** Byte offsets; length at least the rows + 1. */
  offsets: Float64Array;
}

/**
 * The partition of the rows by an enum column's values (docs/api.md "Any users table: the schema"; chosen by
 * store/build.ts `choosePartition`): every text column keeps its order per partition code, and
 * every posting list its rows per code, so that a filter on that column combined with a sort or
 * a substring is a slice or a list group rather than a pass over the rows.
 */
export interface Partition {
  /** The enum column. */
  column: string;
  /** Each row's code: the column's rank (0 null, r its r-th distinct value); length rowCount. */
  codes: Uint8Array;
  /** Rows per code; length S (the column's distinct values + 1, at most 32). */
  counts: Uint32Array;
}

/**
 * The search index (docs/api.md "Global search"): posting lists of the n-grams (n = 1, 2 and 3
 * code points; bits/trigrams.ts `gramKey`) of each row's values in the searchable columns that
 * hold one value per row — every text column (its folded values) and the key (a number key's
 * decimal forms) — grouped by partition code like a column's trigram lists. Twice: one list per
 * n-gram across those columns (`grams`, what a search through every column reads), and one per
 * n-gram of each column alone (`columns`, what a search through some of them reads: an access
 * role's, which so reads nothing of a column it may not see; docs/api.md "Access control",
 * cost isolation). A search term of 1, 2 or 3 code points is exactly one list; a longer one is a
 * superset: the intersection of its trigrams' lists. Enum columns are not in it: a term is
 * decided once per enum value.
 */
export interface SearchIndex {
  /** The lists of n-grams of n code points across the covered columns at `grams[n - 1]`. */
  grams: readonly [TrigramIndex, TrigramIndex, TrigramIndex];
  /**
   * Each covered column's own lists, by column id: its 1-grams at [0], its 2-grams at [1]; its
   * 3-grams are its trigram index (kind.ts `StoredColumn.trigrams`), not stored twice.
   */
  columns: ReadonlyMap<string, readonly [TrigramIndex, TrigramIndex]>;
}

/**
 * The lists of n-grams of `gram` code points of one covered column alone (types.ts `SearchIndex`).
 * @throws Error for a column the search index does not cover (not in {@link searchIndexColumns})
 */
export function columnGrams(store: Store, column: StoredColumn, gram: 1 | 2 | 3): TrigramIndex {
  const own = store.search.columns.get(column.spec.id);
  const index = gram === 3 ? column.trigrams : own === undefined ? null : own[gram - 1];
  if (own === undefined || index === null) throw new Error(`internal: the search index does not cover column "${column.spec.id}"`);
  return index;
}

/** The whole store. */
export interface Store {
  /** Rows in the store. */
  rowCount: number;
  /** The columns in order, the key, and the partition column (docs/api.md "Any users table: the schema"). */
  schema: Schema;
  /** Every column, the key included, by id (a map: a column may be named `__proto__`). */
  columns: Map<string, StoredColumn>;
  /** The partition, or null when no column partitions the rows. */
  partition: Partition | null;
  /**
   * The columns a search term looks into (docs/api.md "Global search": every text and enum
   * column, and the key), in schema order: derived from the schema once, when the store is made.
   */
  searchable: readonly StoredColumn[];
  /** The search index over the searchable columns' per-row values (store/search-index.ts). */
  search: SearchIndex;
  /** Every row's JSON record (the only copy of the raw text values). */
  records: Records;
  /** Identifies the snapshot the store came from (its checksum, hex). */
  snapshotId: string;
}

/**
 * Column `id` of the store.
 * @throws Error for a column the store lacks (the request parsers refuse unknown columns first)
 */
export function storedColumn(store: Store, id: string): StoredColumn {
  const column = store.columns.get(id);
  if (column === undefined) throw new Error(`internal: the store has no column "${id}"`);
  return column;
}

/** The key column of the store. */
export function keyColumn(store: Store): StoredColumn {
  return storedColumn(store, store.schema.key);
}

/** True for a column a search looks into: the key, or a column of a searchable kind (text, enum: docs/api.md "Global search"). */
export function isSearchable(schema: Schema, spec: ColumnSpec): boolean {
  return spec.id === schema.key || KINDS[spec.kind].searchable;
}

/** The columns a search looks into, in schema order: text and enum columns and the key (docs/api.md "Global search"). */
export function searchableColumns(columns: Map<string, StoredColumn>, schema: Schema): StoredColumn[] {
  const out: StoredColumn[] = [];
  for (const spec of schema.columns) {
    const column = columns.get(spec.id);
    if (column === undefined) continue;
    if (isSearchable(schema, spec)) out.push(column);
  }
  return out;
}

/**
 * The searchable columns the search index covers, in schema order: the key, and those of a kind
 * whose per-row values the index holds (text: kind.ts `searchIndexed`); enum columns are decided
 * per value instead.
 */
export function searchIndexColumns(searchable: readonly StoredColumn[]): StoredColumn[] {
  return searchable.filter((column) => inSearchIndex(column.spec, column.key));
}

/**
 * True when the search index covers a column of `spec` (the key when `key`): the key, and a
 * searchable column of a kind whose per-row values the index holds (kind.ts `searchable`,
 * `searchIndexed`). What a column's build (store/column-worker.ts) asks to build its own lists.
 */
export function inSearchIndex(spec: ColumnSpec, key: boolean): boolean {
  return key || (KINDS[spec.kind].searchable && KINDS[spec.kind].searchIndexed);
}

/**
 * The searchable columns a search looks into: every one of the store's (`ids` undefined), or
 * those of them named in `ids` (a search restricted to an access role's columns, docs/api.md
 * "Access control"), in schema order.
 */
export function searchedColumns(store: Store, ids: readonly string[] | undefined): readonly StoredColumn[] {
  if (ids === undefined) return store.searchable;
  return store.searchable.filter((column) => ids.includes(column.spec.id));
}

/** Rows per partition code (length S; one code holding every row when the store has no partition). */
export function partitionCounts(store: Store): Uint32Array {
  return store.partition?.counts ?? Uint32Array.of(store.rowCount);
}

/** The mask of every partition code: bit c set for each of the S codes. */
export function allCodes(store: Store): number {
  const groups = store.partition?.counts.length ?? 1;
  return groups >= 32 ? -1 : (1 << groups) - 1;
}

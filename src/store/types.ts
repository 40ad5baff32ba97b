/**
 * The columnar in-memory store: typed arrays built once by the snapshot builder and viewed
 * straight out of the mapped snapshot file at start-up. Rows are numbered 0…rowCount-1 in
 * ascending `id` order, so row order is id order and the row number is the id's rank.
 */
import type { StringColumnId } from "../schema.ts";
import type { StoredColumn } from "../kinds/kind.ts";
import type { Schema } from "../schema/kinds.ts";
import type { TrigramIndex } from "../bits/trigram-index.ts";

export type { TrigramIndex };

/** A string column's folded values and indexes (`name` or `email`); its raw values are in {@link Records}. */
export interface StringColumn {
  /** Each row's folded value (collation.ts `fold`), UTF-8, back to back. */
  folded: Uint8Array;
  /** Row r's folded value is `folded[foldedOffsets[r] .. foldedOffsets[r+1])`; length rowCount + 1, in bytes. */
  foldedOffsets: Uint32Array;
  /** Permutation of row numbers in collation order, ties by row (id) ascending; length rowCount. */
  rowsByValue: Uint32Array;
  /** Dense collation rank of each row's value (collator-equal values share a rank); length rowCount. */
  rankByRow: Uint32Array;
  /**
   * `rowsByValue` stably partitioned by status code: the rows of status 0 in collation order,
   * then those of status 1; partition p starts at the sum of `statusCounts[0..p)`. Length rowCount.
   */
  rowsByValueByStatus: Uint32Array;
  /** Trigram posting lists over `folded`. */
  trigrams: TrigramIndex;
}

/**
 * Every row's JSON record, row-major: what a page body is assembled from, one bulk copy a row.
 * The raw (unfolded) name and email values live only here, as the records' string literals.
 * The records are cut into chunks of 2^chunkShift rows, each under 4 GiB (the largest typed
 * array the runtime allows), so that no 32-bit offset limits the row count: a store of the
 * four columns has one chunk up to about 40M rows, then more (store/records.ts).
 */
export interface Records {
  /** Rows per chunk, as a power of two: chunk c holds rows [c << chunkShift, (c + 1) << chunkShift). */
  chunkShift: number;
  /**
   * Each chunk's records `{"id":…,"name":…,"email":…,"status":…,…}` back to back, exactly as
   * `JSON.stringify` writes a record of every column in schema order (no white space), UTF-8;
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

/** The whole store. */
export interface Store {
  /** Rows in the store. */
  rowCount: number;
  /** Each row's id, strictly ascending; length rowCount. */
  ids: Float64Array;
  /** Each row's status code (index into STATUS_VALUES); length rowCount. */
  statusCodes: Uint8Array;
  /** Rows per status code; length STATUS_VALUES.length. */
  statusCounts: Uint32Array;
  /**
   * Row numbers grouped by status code, ascending within a group (the `status` sort order,
   * and the per-status permutation of `id`); length rowCount.
   */
  rowsByStatus: Uint32Array;
  /**
   * Rows in ascending order of |id|, ties by id ascending; length rowCount. Null when no id is
   * negative (then it is the identity and row order serves).
   */
  rowsByAbsId: Uint32Array | null;
  /**
   * Trigram posting lists over every row's `String(id)` (ASCII digits, sign, point): what a
   * text filter or a search term on `id` reads (docs/api.md "Global search").
   */
  idTrigrams: TrigramIndex;
  /** Every row's JSON record (the only copy of the raw name and email values). */
  records: Records;
  /** The string columns' indexes. */
  strings: Record<StringColumnId, StringColumn>;
  /** The columns in order (the seed's four first) and the partition column (docs/api.md "Columns beyond the four"). */
  schema: Schema;
  /** The columns beyond the seed's four, by id (the schema's order is in `schema`). */
  columns: Record<string, StoredColumn>;
  /** Identifies the snapshot the store came from (its checksum, hex). */
  snapshotId: string;
}

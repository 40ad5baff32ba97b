/**
 * Builds one string column's arrays and indexes (the part of a snapshot build that grows
 * fastest with the row count): folded bytes, collation permutation and ranks, the per-status
 * permutation and the trigram index, and the values as JSON literals for the records. Pure, so it runs on the main thread or in
 * a worker (column-worker.ts) alike.
 */
import { foldColumn } from "../collation/fold-column.ts";
import { sortUtf8ByCollation } from "../collation/sort.ts";
import { type ByteColumn, packJsonLiterals } from "../bits/byte-column.ts";
import { buildTrigramIndex } from "./trigrams.ts";
import type { StringColumn } from "./types.ts";

/**
 * Stable partition of a permutation by status code: status 0's rows first, then 1's.
 * @param rows a permutation of row numbers; length n
 * @param statusCodes status code per row; length n
 * @param statusCounts rows per status code
 * @returns a new permutation of length n
 */
export function partitionByStatus(rows: Uint32Array, statusCodes: Uint8Array, statusCounts: Uint32Array): Uint32Array {
  const out = new Uint32Array(rows.length);
  const cursor = new Uint32Array(statusCounts.length);
  for (let code = 1; code < cursor.length; code++) cursor[code] = cursor[code - 1] + statusCounts[code - 1];
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    out[cursor[statusCodes[row]]++] = row;
  }
  return out;
}

/** Rows from which a build collects garbage between its steps. */
const COLLECT_FROM_ROWS = 1 << 20;

/**
 * Runs a full garbage collection when the column has at least {@link COLLECT_FROM_ROWS} rows.
 * The sort and the trigram index leave hundreds of MB of dead typed arrays at 10M rows, which
 * the collector would otherwise free late: collecting right away (a few ms, as the heap holds
 * few objects) keeps the peak memory of a build lower.
 */
function releaseGarbage(rowCount: number): void {
  if (rowCount >= COLLECT_FROM_ROWS) Bun.gc(true);
}

/** A built string column, and its values as JSON string literals (for store/records.ts `buildRecords`). */
export interface BuiltStringColumn {
  column: StringColumn;
  /** Each row's value as a JSON string literal (quotes included), UTF-8; n values. */
  literals: ByteColumn;
}

/**
 * Builds a string column from its values in row order, working on the UTF-8 bytes throughout
 * (no JS string per value).
 * @param values one value per row, well-formed UTF-8 packed; n values (offsets of length n + 1)
 * @param statusCodes status code per row; length n
 * @param statusCounts rows per status code
 * @throws RangeError when a packed column would exceed 4 GiB
 */
export function buildStringColumn(values: ByteColumn, statusCodes: Uint8Array, statusCounts: Uint32Array): BuiltStringColumn {
  const n = values.offsets.length - 1;
  // The sort first: its temporaries (the largest of the build) are gone before the outputs grow.
  const { order, ranks } = sortUtf8ByCollation(values);
  releaseGarbage(n);
  const literals = packJsonLiterals(values);
  const folded = foldColumn(values);
  const rowsByValueByStatus = partitionByStatus(order, statusCodes, statusCounts);
  const trigrams = buildTrigramIndex(folded.bytes, folded.offsets, n, statusCodes);
  releaseGarbage(n);
  const column: StringColumn = {
    folded: folded.bytes,
    foldedOffsets: folded.offsets,
    rowsByValue: order,
    rankByRow: ranks,
    rowsByValueByStatus,
    trigrams,
  };
  return { column, literals };
}

/** Every typed array of a built column, for transfer between threads. */
export function columnBuffers(built: BuiltStringColumn): ArrayBuffer[] {
  const c = built.column;
  return [built.literals.bytes, built.literals.offsets, c.folded, c.foldedOffsets, c.rowsByValue, c.rankByRow, c.rowsByValueByStatus, c.trigrams.keys, c.trigrams.counts, c.trigrams.statusCounts, c.trigrams.refs, c.trigrams.bitmaps, c.trigrams.gaps].map(
    (a) => a.buffer as ArrayBuffer,
  );
}

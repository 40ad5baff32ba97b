/**
 * Worker entry of the parallel build (build.ts `buildStoreParallel`): builds a share of the
 * columns off the main thread. Receives typed arrays (transferred, no per-value cloning), builds
 * each column by its kind (and, for a column the search index covers, its own 1- and 2-gram
 * lists), then transfers the built arrays back. Listed as an entry point of
 * `bun build --compile`.
 */
import type { ByteColumn } from "../bits/byte-column.ts";
import type { PartitionCodes, StoredColumn } from "../kinds/kind.ts";
import type { ColumnSpec } from "../schema/kinds.ts";
import type { ConvertedColumn } from "../kinds/convert.ts";
import type { TrigramIndex } from "../bits/trigram-index.ts";
import { buffersOf, buildColumn } from "./build.ts";
import { ownGramLists } from "./search-index.ts";
import { inSearchIndex } from "./types.ts";

/** A share of the columns to build, with what every column's build needs. */
export interface ColumnJob {
  /** Rows of the table, n. */
  rows: number;
  /** The columns, each with its values in input order (n rows) and whether it is the key. */
  columns: { spec: ColumnSpec; values: ConvertedColumn; key: boolean }[];
  /** Store row → input position (key order), or null when input order is key order; length n. */
  order: Uint32Array | null;
  /** The partition codes (length n) and rows per code, or null. */
  partition: PartitionCodes | null;
}

/** One column built: its stored parts and its JSON literals in row order (n values). */
export interface ColumnBuilt {
  column: StoredColumn;
  literals: ByteColumn;
  /** Its own 1- and 2-gram lists when the search index covers it (types.ts `inSearchIndex`), else null. */
  grams: readonly [TrigramIndex, TrigramIndex] | null;
}

declare const self: Worker;

self.onmessage = (event: MessageEvent<ColumnJob>) => {
  try {
    const { rows, columns, order, partition } = event.data;
    const built: ColumnBuilt[] = [];
    for (const c of columns) {
      const one = buildColumn(c.spec, c.values, { order, key: c.key, partition });
      // the column's own search lists are built here too, on this worker's core
      built.push({ ...one, grams: inSearchIndex(c.spec, c.key) ? ownGramLists(one.column, rows, partition) : null });
      // the input's arrays are done with: let the collector take them before the next column
      c.values = null as unknown as ConvertedColumn;
    }
    self.postMessage({ built }, buffersOf(built));
  } catch (error) {
    self.postMessage({ error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }
};

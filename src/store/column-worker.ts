/**
 * Worker entry of the parallel build (build.ts `buildStoreParallel`): builds one string column,
 * or the columns beyond the seed's four, off the main thread. Receives typed arrays (transferred,
 * no per-value cloning), builds straight from them, then transfers the built typed arrays back.
 * Listed as an entry point of `bun build --compile`.
 */
import { type ExtraColumnsBuilt, buffersOf, buildExtraColumns } from "./extra-columns.ts";
import type { ExtraInput } from "./build.ts";
import { buildStringColumn, columnBuffers } from "./string-column.ts";

/** A string column job: the values of `name` or `email`. */
export interface ColumnJob {
  /** UTF-8 of the values back to back; value i is `bytes[offsets[i] .. offsets[i+1])`. */
  bytes: Uint8Array;
  /** Byte offsets; length n + 1. */
  offsets: Uint32Array;
  /** Status code per row; length n. */
  statusCodes: Uint8Array;
  /** Rows per status code. */
  statusCounts: Uint32Array;
}

/** A job of the columns beyond the seed's four (extra-columns.ts `buildExtraColumns`). */
export interface ExtraColumnsJob {
  extra: ExtraInput[];
  /** Store row → input position, or null when input order is row order. */
  byId: Uint32Array | null;
  /** Each store row's status code; length rowCount. */
  statusCodes: Uint8Array;
}

declare const self: Worker;

self.onmessage = (event: MessageEvent<ColumnJob | ExtraColumnsJob>) => {
  try {
    const job = event.data;
    if ("extra" in job) {
      const built: ExtraColumnsBuilt = buildExtraColumns(job.extra, job.byId, job.statusCodes);
      self.postMessage({ extra: built }, buffersOf(built));
      return;
    }
    const { bytes, offsets, statusCodes, statusCounts } = job;
    const built = buildStringColumn({ bytes, offsets }, statusCodes, statusCounts);
    self.postMessage({ built }, columnBuffers(built));
  } catch (error) {
    self.postMessage({ error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }
};

/**
 * Worker entry: builds one string column off the main thread (build.ts `buildStoreParallel`).
 * Receives the values as packed UTF-8 (transferred, no per-string cloning) and builds straight
 * from those bytes, then transfers the column's typed arrays (and its JSON literals) back. Listed as an entry point of
 * `bun build --compile`.
 */
import { buildStringColumn, columnBuffers } from "./string-column.ts";

/** The message a column worker receives. */
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

declare const self: Worker;

self.onmessage = (event: MessageEvent<ColumnJob>) => {
  try {
    const { bytes, offsets, statusCodes, statusCounts } = event.data;
    const built = buildStringColumn({ bytes, offsets }, statusCodes, statusCounts);
    self.postMessage({ built }, columnBuffers(built));
  } catch (error) {
    self.postMessage({ error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
  }
};

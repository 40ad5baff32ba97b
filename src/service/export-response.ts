/**
 * The answers of the facets and export routes (docs/api.md "Facets", "Export"): a facets JSON
 * body with the data headers, and an export streamed batch by batch with back-pressure (a
 * batch is made only once the previous one has drained to the client) that stops when the
 * client goes away.
 */
import type { Logger } from "pino";
import type { ExportCursor } from "../engine/export.ts";
import { SLICE_MS } from "../engine/scheduler.ts";
import type { FacetsAnswer } from "../engine/facets.ts";
import type { ExportFormat } from "../query/export.ts";
import { type ExportBuffer, csvHeader, rowsCsv, rowsNdjson } from "../store/rows-export.ts";
import type { Schema } from "../schema/kinds.ts";
import type { Projection } from "../store/record-fields.ts";
import type { ExtraRecords, Store } from "../store/types.ts";
import { type Coding, GzipPieces } from "./compress.ts";
import { JSON_TYPE, bytesResponse } from "./responses.ts";

const encoder = new TextEncoder();

/** Resolves at the event loop's next turn, after the I/O that is ready (other requests) is handled. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The facets 200: `{facets, total}` as JSON with the data headers (`ETag`, `X-Snapshot-Id`,
 * `Cache-Control: no-cache`, `Vary: Accept-Encoding`), compressed as any data body.
 */
export function facetsResponse(answer: FacetsAnswer, etag: string, snapshotId: string, coding: Coding | null): Response {
  const headers = { "content-type": JSON_TYPE, etag, "x-snapshot-id": snapshotId, "cache-control": "no-cache", vary: "Accept-Encoding" };
  return bytesResponse(encoder.encode(JSON.stringify(answer)), 200, headers, coding);
}

/** What an export's rows are written as (see {@link exportResponse}). */
export interface ExportShape {
  /** The id `X-Snapshot-Id` shows (a live replica's `<snapshotId>@<LSN>`). */
  version: string;
  /** The version the file is named after, when not `version` (a restricted access role's token: engine/view-version.ts). */
  file?: string;
  /** The schema the client sees: the CSV header's columns. */
  schema: Schema;
  /** The members each record keeps (an access role's), or null for every one. */
  projection: Projection | null;
  /** The records of rows beyond the store's (a live replica's changed rows), or null. */
  extra: ExtraRecords | null;
}

/** Content types of the export formats. */
const EXPORT_TYPES: Record<ExportFormat, string> = {
  csv: "text/csv; charset=utf-8; header=present",
  ndjson: "application/x-ndjson",
};

/**
 * The export 200: every row of `cursor` as CSV (a header line first) or NDJSON, streamed with
 * back-pressure: each batch is written into one reused buffer and handed to the response's sink
 * (which copies it), and the next is made only once the sink has drained — the client's reading
 * paces the export, compressed or not, and a slow reader holds no more than the sink's buffer.
 * Nothing a batch leaves behind needs collecting (no forced garbage collection pauses other
 * requests), and after each scheduler slice of batches (engine/scheduler.ts `SLICE_MS`) the export
 * waits for the event loop's next turn, so other requests are answered between its slices even
 * when the client reads as fast as it is written. A client that disconnects stops the export: no further batch is made.
 * `Content-Disposition: attachment; filename="<resource>-<snapshotId>.<ext>"` (docs/api.md
 * "Export", "Resource name"). With gzip (when the client accepts it), each batch is compressed
 * as it is written (compress.ts {@link GzipPieces}).
 * @param gzip true when the client accepts gzip
 * @param logger where a stopped export is noted (rows written of the total)
 * @param resource the resource name (resource.ts), the file name's first part
 * @param shape what the rows are written as: the version `X-Snapshot-Id` shows and the file is
 *   named after (engine/execute.ts `versionId`; an LSN's slash becomes `-`), the schema the
 *   client sees (the CSV header's columns), the projection of the records onto it (an access
 *   role's; null for every column), and the records of rows beyond the store's (a live
 *   replica's changed rows: engine/execute.ts `extraRecords`); default the store's snapshot id
 *   and schema, every column, none
 */
export function exportResponse(
  store: Store,
  cursor: ExportCursor,
  format: ExportFormat,
  etag: string,
  gzip: boolean,
  logger: Logger,
  resource: string,
  shape: ExportShape = { version: store.snapshotId, schema: store.schema, projection: null, extra: null },
): Response {
  const { version, projection, extra } = shape;
  const file = shape.file ?? version;
  const headers: Record<string, string> = {
    "content-type": EXPORT_TYPES[format],
    "content-disposition": `attachment; filename="${resource}-${file.replace("/", "-")}.${format}"`,
    etag,
    "x-snapshot-id": version,
    "cache-control": "no-cache",
    vary: "Accept-Encoding",
  };
  if (gzip) headers["content-encoding"] = "gzip";
  let written = 0;
  let stopped = false;
  // One buffer the batches are written into, copied by the sink: no array per batch.
  const buffer: ExportBuffer = { bytes: new Uint8Array(1 << 20) };
  const pieces = gzip ? new GzipPieces() : null;
  const source: Bun.DirectUnderlyingSource = {
    type: "direct",
    async pull(controller: ReadableStreamDirectController) {
      /** Writes bytes as they are and waits until the sink has drained. */
      const write = async (out: Uint8Array) => {
        // 0: the client has gone (cancel follows)
        if (out.length > 0 && (await controller.write(out)) === 0) stopped = true;
        if (!stopped) await controller.flush(true);
      };
      /** Writes body bytes: compressed when gzip. */
      const send = (bytes: Uint8Array) => write(pieces === null ? bytes : pieces.piece(bytes));
      if (pieces !== null) await write(pieces.header());
      if (format === "csv") await send(csvHeader(shape.schema));
      let turn = performance.now();
      while (!stopped) {
        const rows = cursor.next();
        if (rows === null) break;
        written += rows.length;
        await send(format === "csv" ? rowsCsv(store, rows, buffer, extra, projection) : rowsNdjson(store, rows, buffer, extra, projection));
        // A sink that drains at once (a fast reader on loopback) resolves each write as a
        // microtask, and microtasks alone never let the event loop read another request: after a
        // scheduler slice of batches, wait for the next turn.
        if (performance.now() - turn >= SLICE_MS) {
          await nextTurn();
          turn = performance.now();
        }
      }
      if (stopped) return;
      if (pieces !== null) await controller.write(pieces.end());
      controller.close();
    },
    cancel() {
      stopped = true;
      logger.info({ rows: written, total: cursor.total }, "export stopped: the client went away");
    },
  };
  // Bun's direct stream (its type is Bun's, not the DOM library's that the compiler also sees)
  return new Response(new ReadableStream(source as unknown as UnderlyingDefaultSource<Uint8Array>), { headers });
}
